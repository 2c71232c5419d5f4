// A zip archive of stored (uncompressed) members, written with libzip, as
// Keras' model.save() writes a .keras file (Python's zipfile, ZIP_STORED).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace axon::io {

// The archive's bytes: the members in the order given, each dated now.
// RuntimeError naming the member when libzip fails.
std::string zip_stored(const std::vector<std::pair<std::string, std::string_view>>& members);

}  // namespace axon::io
