// Writes a whole file or nothing: the bytes go to a temporary file beside the
// target, are flushed to disk, and the temporary is renamed over the target
// (atomic on POSIX), so a reader never sees a half-written file.
#pragma once

#include <filesystem>
#include <string_view>

namespace axon::train {

// Throws UsageError when the folder does not exist or is not writable,
// RuntimeError when writing fails midway (the target is left untouched).
void write_file_atomically(const std::filesystem::path& target, std::string_view bytes);

}  // namespace axon::train
