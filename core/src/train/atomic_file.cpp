#include <axon/error.hpp>
#include <axon/train/atomic_file.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace axon::train {

void write_file_atomically(const std::filesystem::path& target, std::string_view bytes) {
  std::filesystem::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw UsageError("cannot write " + target.string() + ": folder " + folder.string() + " does not exist");
  if (std::filesystem::is_directory(target, ec))
    throw UsageError("cannot write " + target.string() + ": it is a folder");
  // Same folder, so rename() stays on one file system; the pid keeps two
  // processes writing the same target apart.
  std::string tmp_name = ".";  // appended piecewise: GCC 12's -Wrestrict misfires on "." + string
  tmp_name += target.filename().string();
  tmp_name += ".tmp.";
  tmp_name += std::to_string(static_cast<long>(::getpid()));
  const std::filesystem::path tmp = folder / tmp_name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int e = errno;
    const std::string msg = "cannot write " + target.string() + ": " + std::strerror(e);
    if (e == EACCES || e == EROFS || e == ENOENT) throw UsageError(msg);
    throw RuntimeError(msg);
  }
  auto fail = [&](const char* what) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw RuntimeError(std::string(what) + " " + tmp.string() + " (for " + target.string() + "): " + std::strerror(e));
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("writing");
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) fail("flushing");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("closing " + tmp.string() + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("renaming " + tmp.string() + " to " + target.string() + ": " + std::strerror(e));
  }
}

}  // namespace axon::train
