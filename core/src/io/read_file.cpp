#include <axon/error.hpp>
#include <axon/io/read_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace axon::io {
namespace {

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

const char* file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

std::string read_regular_file(const std::filesystem::path& file, uint64_t max_bytes, const std::string& what) {
  auto fail = [&](const std::string& why) -> UsageError { return UsageError(what + " " + file.string() + ": " + why); };
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
  Fd f{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)};
  if (f.fd < 0) throw fail(std::string("cannot open: ") + std::strerror(errno));
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw fail(std::string("cannot read its size: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw fail(std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    throw fail("is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) + " it can be");
  std::string bytes(static_cast<size_t>(size), '\0');
  // One byte more than fstat said is read for, to notice a file that grows.
  char probe = 0;
  uint64_t done = 0;
  for (;;) {
    char* dst = done < size ? bytes.data() + done : &probe;
    const size_t want = done < size ? static_cast<size_t>(size - done) : 1;
    const ssize_t r = ::read(f.fd, dst, want);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw fail(std::string("cannot read: ") + std::strerror(errno));
    }
    if (r == 0) break;
    done += static_cast<uint64_t>(r);
    if (done > size) throw fail("grew while it was read");
  }
  if (done < size) throw fail("shrank while it was read (" + std::to_string(done) + " of " + std::to_string(size) + " bytes)");
  return bytes;
}

}  // namespace axon::io
