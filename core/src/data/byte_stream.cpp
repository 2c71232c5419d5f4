#include <axon/data/byte_stream.hpp>
#include <axon/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace axon::data {

void ByteStream::read_exactly(void* dst, uint64_t n, const char* what) {
  auto* out = static_cast<unsigned char*>(dst);
  uint64_t done = 0;
  while (done < n) {
    const size_t got = read_some(out + done, static_cast<size_t>(std::min<uint64_t>(n - done, 1u << 30)));
    if (got == 0)
      throw UsageError(name() + ": truncated: ends inside the " + what + " after " + std::to_string(done) + " of " +
                       std::to_string(n) + " bytes");
    done += got;
  }
}

void ByteStream::expect_end(const char* what) {
  unsigned char extra;
  if (read_some(&extra, 1) != 0) throw UsageError(name() + ": has bytes after the " + what);
}

std::string not_a_regular_file(const std::filesystem::path& path) {
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ELOOP) return "is a symbolic link loop";
    if (e == ENOENT) {
      struct stat lst{};
      if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) return "is a symbolic link to nothing";
      return "does not exist";
    }
    return std::string("cannot be read: ") + std::strerror(e);
  }
  if (S_ISREG(st.st_mode)) return {};
  if (S_ISDIR(st.st_mode)) return "is a folder, not a regular file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

FileStream::FileStream(const std::filesystem::path& file) : name_(file.string()) {
  // O_NONBLOCK: a FIFO must not block the open.
  fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) {
    const int e = errno;
    const std::string what = not_a_regular_file(file);
    throw UsageError(name_ + ": " + (what.empty() ? std::string("cannot open: ") + std::strerror(e) : what));
  }
  struct stat st{};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    const std::string what = not_a_regular_file(file);
    throw UsageError(name_ + ": " + (what.empty() ? "is not a regular file" : what));
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileStream::~FileStream() {
  if (fd_ >= 0) ::close(fd_);
}

size_t FileStream::read_some(void* dst, size_t n) {
  for (;;) {
    const ssize_t r = ::read(fd_, dst, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) throw UsageError(name_ + ": cannot read: " + std::strerror(errno));
  }
}

}  // namespace axon::data
