// A sequence of bytes read front to back: a regular file, or a member of a
// zip archive (zip_archive.hpp). Readers of NumPy files take one, so the
// same code reads a .npy on disk and one inside a .npz.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace axon::data {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to n bytes into dst; 0 only at the end. Corrupt data is a UsageError.
  virtual size_t read_some(void* dst, size_t n) = 0;
  // What messages call it: "x.npz: x_train.npy", "x.npy".
  virtual const std::string& name() const = 0;
  // Exactly n bytes; a short read is a UsageError saying the data ends inside `what`.
  void read_exactly(void* dst, uint64_t n, const char* what);
  // UsageError unless the stream is at its end.
  void expect_end(const char* what);
};

// A regular file (a FIFO, device or folder is refused without blocking).
class FileStream : public ByteStream {
 public:
  explicit FileStream(const std::filesystem::path& file);
  ~FileStream() override;
  FileStream(const FileStream&) = delete;
  FileStream& operator=(const FileStream&) = delete;
  size_t read_some(void* dst, size_t n) override;
  const std::string& name() const override { return name_; }
  uint64_t file_size() const { return size_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string name_;
};

// What a path is when it is not a readable regular file, for messages: "does
// not exist", "is a folder", "is a FIFO", "is a symbolic link loop", ...;
// empty for a regular file.
std::string not_a_regular_file(const std::filesystem::path& path);

}  // namespace axon::data
