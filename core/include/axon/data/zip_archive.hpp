// A zip archive read with libzip (a .npz is one: NumPy's savez writes each
// array as a .npy member, stored or deflated). Only what is needed to read
// members is exposed, with the checks a hostile archive calls for: the
// central directory checked against the local headers (ZIP_CHECKCONS),
// encrypted members and compression methods other than stored and deflate
// refused, a member whose compressed bytes would not fit in the file, and
// one that would inflate more than kMaxInflateRatio times its compressed
// size, refused before it is read (a zip bomb). A member's
// stream ends at the size its entry declares and checks its CRC there.
#pragma once

#include <axon/data/byte_stream.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct zip;

namespace axon::data {

// Deflate's own best is about 1032:1; real data (NumPy arrays of images)
// stays far below. A member above this ratio is refused once larger than
// kMinInflateCheckBytes (small members of one repeated byte are harmless).
inline constexpr uint64_t kMaxInflateRatio = 200;
inline constexpr uint64_t kMinInflateCheckBytes = uint64_t{1} << 20;
// Members an archive may list.
inline constexpr uint64_t kMaxZipMembers = 4096;

class ZipArchive {
 public:
  struct Member {
    std::string name;
    uint64_t index = 0;
    uint64_t size = 0;             // uncompressed, as declared
    uint64_t compressed_size = 0;  // as declared
    uint16_t method = 0;           // 0 stored, 8 deflate, ...
    bool encrypted = false;
  };

  // Opens a regular file; UsageError naming it when it is not a zip archive.
  explicit ZipArchive(const std::filesystem::path& file);
  // An archive already in memory (`bytes` must outlive it), called `name`.
  ZipArchive(std::span<const uint8_t> bytes, std::string name);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::string& name() const { return name_; }
  const std::vector<Member>& members() const { return members_; }
  const Member* find(const std::string& member) const;
  // The member's bytes; UsageError when it is encrypted, compressed by another
  // method, or a zip bomb (above).
  std::unique_ptr<ByteStream> open(const Member& m);

 private:
  std::string name_;
  uint64_t file_size_ = 0;
  ::zip* archive_ = nullptr;
  std::vector<Member> members_;
  void list_members();
};

}  // namespace axon::data
