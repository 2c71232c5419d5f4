// What every fuzz target asks of a refusal: one line (a UsageError that
// spans lines would break the apps' one-line error contract).
#pragma once

#include <axon/error.hpp>

#include <cstdlib>

namespace axon::fuzz {

inline void check_message(const UsageError& e) {
  for (const char* p = e.what(); *p; ++p)
    if (*p == '\n' || *p == '\r') std::abort();
}

}  // namespace axon::fuzz
