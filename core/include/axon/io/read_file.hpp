// Reading a whole file that may be hostile: only a regular file is read
// (never a folder, a device such as /dev/zero, or a FIFO that would block),
// only up to a size limit checked before any memory is spent, and only the
// bytes it had when opened (a file growing meanwhile is an error).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace axon::io {

// What a file of this st_mode is, for messages: "a folder", "a FIFO", ...
const char* file_kind(mode_t mode);

// The file's bytes. UsageError "<what> <path>: ..." when it cannot be opened,
// is not a regular file, is larger than max_bytes, or changes size while read.
std::string read_regular_file(const std::filesystem::path& file, uint64_t max_bytes, const std::string& what);

}  // namespace axon::io
