// Fuzz inputs as files: the readers under test take paths. A memfd is a
// regular file in memory, reachable as /proc/self/fd/N, so no disk is used.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace axon::fuzz {

class InputFile {
 public:
  InputFile(const uint8_t* data, size_t size) : fd_(::memfd_create("axon-fuzz-input", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    for (size_t done = 0; done < size;) {
      const ssize_t w = ::write(fd_, data + done, size - done);
      if (w <= 0) std::abort();
      done += static_cast<size_t>(w);
    }
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace axon::fuzz
