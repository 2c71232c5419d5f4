// Writes a whole file or nothing: the bytes go to a temporary file beside the
// target, are flushed to disk, the temporary is renamed over the target
// (atomic on POSIX) and the folder is flushed too, so a reader never sees a
// half-written file and a crash leaves the old file or the new one.
//
// Only regular files are written. A target that is a symbolic link is
// written where the link points (the link stays); one that is a folder, a
// device, a FIFO or a socket is refused, never replaced. The temporary is
// named ".NAME.tmp.PID" (NAME cut short when the whole would pass the file
// system's name limit); those a killed process left behind are removed by
// the next write to the same target.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace axon::train {

// Throws UsageError naming `what` (e.g. "--save") unless write_file_atomically
// could write `target`: a non-empty name, not a folder or special file, in a
// folder that exists and takes a new file (checked by creating and removing
// the temporary). For checks before a long run, so it is not lost at the end.
void check_output_file(const std::filesystem::path& target, const std::string& what);

// Makes the folder `dir` when it is missing (its parent must exist) and checks
// that it takes a new file named `probe_name`; UsageError naming `what`
// (e.g. "--checkpoint-dir") otherwise.
void prepare_output_dir(const std::filesystem::path& dir, const std::string& what, const std::string& probe_name);

// Throws UsageError when the target cannot be a file (as above) or its folder
// does not exist or is not writable, RuntimeError when writing fails midway
// (the target is left untouched and the temporary removed).
void write_file_atomically(const std::filesystem::path& target, std::string_view bytes);

// The same file: equal after resolving links and ".." (for targets that may
// not exist yet), or the same inode.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace axon::train
