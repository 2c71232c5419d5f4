// The texts of a collective's failure, the same whichever path (the MPI
// bridge, a plugin's communicator, the in-process all-reduce) it failed on.
#pragma once

#include <cstddef>
#include <string>

namespace axon::distribute {

// "2,976 bytes"
std::string byte_count(size_t bytes);

// "WHERE did not complete within 30 s (--collective-timeout): another worker
// died or stalled"
std::string timed_out(const std::string& where, double timeout_s);

}  // namespace axon::distribute
