// IDX reader: header validation first, then the data, never more memory than
// the bytes the file really holds. See axon/data/idx.hpp for the rules.
#include <axon/data/byte_stream.hpp>
#include <axon/data/idx.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <zlib.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace axon::data {
namespace {

constexpr int kUbyteType = 0x08;
// gzip data is gathered in pieces of this size until its length is known.
constexpr size_t kChunk = size_t{1} << 20;

[[noreturn]] void bad(const std::filesystem::path& file, const std::string& what) {
  throw UsageError(file.string() + ": " + what);
}

uint32_t big_endian_u32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

const char* type_name(int code) {
  switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "short";
    case 0x0C: return "int";
    case 0x0D: return "float";
    case 0x0E: return "double";
    default: return "unknown";
  }
}

// The bytes of a raw or gzip-compressed regular file. gzip is inflated here
// member by member (zlib checks each member's CRC and length), so a file of
// several members reads whole, and bytes after the last member that are not
// another member are an error rather than silently ignored.
class Source {
 public:
  explicit Source(const std::filesystem::path& file) : file_(file) {
    // O_NONBLOCK: a FIFO named like a data file must not block the open.
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd_ < 0) {
      const int e = errno;
      const std::string what = not_a_regular_file(file);  // a symbolic link loop, ...
      bad(file, what.empty() ? std::string("cannot open: ") + std::strerror(e) : what);
    }
    struct stat st{};
    if (::fstat(fd_, &st) != 0) fail_errno("cannot read its size");
    if (!S_ISREG(st.st_mode)) {
      ::close(fd_);
      fd_ = -1;
      const std::string what = not_a_regular_file(file);
      bad(file, what.empty() ? "is not a regular file" : what);
    }
    file_size_ = static_cast<uint64_t>(st.st_size);
    unsigned char magic[2] = {0, 0};
    gzip_ = ::pread(fd_, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (gzip_) {
      in_.resize(1 << 16);
      if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) {
        ::close(fd_);
        throw RuntimeError(file.string() + ": cannot start zlib");
      }
      z_live_ = true;
    }
  }
  ~Source() {
    if (z_live_) inflateEnd(&z_);
    if (fd_ >= 0) ::close(fd_);
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  bool gzip() const { return gzip_; }
  uint64_t file_size() const { return file_size_; }

  // Reads exactly n bytes; a short read is a "truncated" UsageError.
  void read(void* dst, uint64_t n, const char* what) {
    auto* out = static_cast<unsigned char*>(dst);
    uint64_t done = 0;
    while (done < n) {
      const size_t got = read_some(out + done, static_cast<size_t>(std::min<uint64_t>(n - done, 1u << 30)));
      if (got == 0)
        bad(file_, std::string("truncated") + (gzip_ ? " gzip data" : "") + ": ends inside the " + what + " after " +
                       std::to_string(done) + " of " + std::to_string(n) + " bytes");
      done += got;
    }
  }

  // After the data the header promises: the file must end here.
  void expect_end() {
    unsigned char extra;
    if (read_some(&extra, 1) != 0) bad(file_, "has data after the bytes the header promises");
  }

 private:
  [[noreturn]] void fail_errno(const char* what) {
    const int e = errno;
    bad(file_, std::string(what) + ": " + std::strerror(e));
  }

  // Up to n bytes; 0 only at the end of the data.
  size_t read_some(unsigned char* dst, size_t n) {
    if (!gzip_) {
      for (;;) {
        const ssize_t r = ::read(fd_, dst, n);
        if (r >= 0) return static_cast<size_t>(r);
        if (errno != EINTR) fail_errno("cannot read");
      }
    }
    const auto want = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    z_.next_out = dst;
    z_.avail_out = want;
    while (z_.avail_out == want) {
      if (z_.avail_in == 0 && !refill()) {
        if (!member_open_) return 0;
        bad(file_, "truncated gzip data: the file ends inside a compressed member");
      }
      if (!member_open_) start_member();
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        member_open_ = false;  // its CRC and length checked out
      } else if (r == Z_DATA_ERROR || r == Z_NEED_DICT) {
        bad(file_, std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "invalid compressed data"));
      } else if (r == Z_MEM_ERROR) {
        throw RuntimeError(file_.string() + ": zlib ran out of memory");
      }
    }
    return want - z_.avail_out;
  }

  // A new member must start with gzip's magic; anything else after the last
  // member is corruption.
  void start_member() {
    if (z_.avail_in < 2 && !refill_keep()) bad(file_, "has a stray byte after its last gzip member");
    if (z_.next_in[0] != 0x1f || z_.next_in[1] != 0x8b)
      bad(file_, "has data after its last gzip member that is not gzip");
    if (inflateReset(&z_) != Z_OK) throw RuntimeError(file_.string() + ": cannot restart zlib");
    member_open_ = true;
  }

  // More compressed input; false at the end of the file.
  bool refill() {
    for (;;) {
      const ssize_t r = ::read(fd_, in_.data(), in_.size());
      if (r > 0) {
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(r);
        return true;
      }
      if (r == 0) return false;
      if (errno != EINTR) fail_errno("cannot read");
    }
  }
  // Like refill, but keeps the unread byte(s) at the front.
  bool refill_keep() {
    const size_t keep = z_.avail_in;
    if (keep > 0) std::memmove(in_.data(), z_.next_in, keep);
    for (;;) {
      const ssize_t r = ::read(fd_, in_.data() + keep, in_.size() - keep);
      if (r >= 0) {
        z_.next_in = in_.data();
        z_.avail_in = static_cast<uInt>(keep + static_cast<size_t>(r));
        return z_.avail_in >= 2;
      }
      if (errno != EINTR) fail_errno("cannot read");
    }
  }

  std::filesystem::path file_;
  int fd_ = -1;
  uint64_t file_size_ = 0;
  bool gzip_ = false;
  z_stream z_{};
  bool z_live_ = false;
  bool member_open_ = false;
  std::vector<unsigned char> in_;
};

IdxHeader parse_header(Source& src, const std::filesystem::path& file, int expected_rank) {
  unsigned char magic[4];
  src.read(magic, 4, "header");
  if (magic[0] != 0 || magic[1] != 0)
    bad(file, "not an IDX file (bad magic number 0x" + [&] {
          char b[9];
          std::snprintf(b, sizeof b, "%02x%02x%02x%02x", magic[0], magic[1], magic[2], magic[3]);
          return std::string(b);
        }() + ", expected 0x0000080" + std::to_string(expected_rank) + ")");
  if (magic[2] != kUbyteType)
    bad(file, std::string("holds ") + type_name(magic[2]) + " elements (type code " + std::to_string(magic[2]) +
                  "); only unsigned byte (0x08) IDX files are supported");
  IdxHeader h;
  h.rank = magic[3];
  h.gzip = src.gzip();
  if (h.rank != expected_rank)
    bad(file, "has rank " + std::to_string(h.rank) + ", expected " + std::to_string(expected_rank) +
                  (expected_rank == 1 ? " (labels)" : " (images)"));
  unsigned char dims[4 * 3];
  src.read(dims, 4 * static_cast<uint64_t>(h.rank), "header");
  uint64_t payload = 1;
  for (int i = 0; i < h.rank; ++i) {
    const uint32_t d = big_endian_u32(dims + 4 * i);
    if (d == 0) bad(file, "dimension " + std::to_string(i) + " is 0");
    h.dims.push_back(d);
    // Checked before multiplying: three factors below 2^32 can wrap 64 bits.
    if (payload > limits::kMaxIdxDataBytes / d)
      bad(file, "the header's dimensions promise more than " + std::to_string(limits::kMaxIdxDataBytes) +
                    " data bytes, the limit for one IDX file");
    payload *= d;
  }
  if (!src.gzip()) {
    // A raw file's size is known: it must hold exactly what the header says.
    const uint64_t total = 4 + 4 * static_cast<uint64_t>(h.rank) + payload;
    const uint64_t size = src.file_size();
    if (size < total)
      bad(file, "truncated: the header promises " + std::to_string(payload) + " data bytes but the file has only " +
                    std::to_string(size - (total - payload)) + " after the header");
    if (size > total)
      bad(file, "has " + std::to_string(size - total) + " bytes after the " + std::to_string(payload) +
                    " data bytes the header promises");
  }
  return h;
}

}  // namespace

uint64_t IdxHeader::payload_bytes() const {
  uint64_t n = 1;
  for (int64_t d : dims) n *= static_cast<uint64_t>(d);
  return n;
}

IdxHeader read_idx_header(const std::filesystem::path& file, int expected_rank) {
  Source src(file);
  return parse_header(src, file, expected_rank);
}

IdxArray read_idx(const std::filesystem::path& file, int expected_rank) {
  Source src(file);
  IdxHeader h = parse_header(src, file, expected_rank);
  IdxArray a;
  a.dims = h.dims;
  const uint64_t n = h.payload_bytes();
  if (!src.gzip()) {
    a.data.resize(n);  // the file's size matched the header
    src.read(a.data.data(), n, "data");
    src.expect_end();
    return a;
  }
  // The header of a gzip file cannot be checked against its size (the
  // trailer's length field is modulo 2^32 and only covers the last member),
  // so memory follows the data inflated: pieces first, one buffer once the
  // stream has proved as long as the header says.
  std::vector<std::vector<uint8_t>> pieces;
  for (uint64_t done = 0; done < n;) {
    pieces.emplace_back(static_cast<size_t>(std::min<uint64_t>(kChunk, n - done)));
    src.read(pieces.back().data(), pieces.back().size(), "data");
    done += pieces.back().size();
  }
  src.expect_end();
  a.data.reserve(n);
  for (std::vector<uint8_t>& p : pieces) {
    a.data.insert(a.data.end(), p.begin(), p.end());
    std::vector<uint8_t>().swap(p);  // freed as it is copied: the peak stays near n
  }
  return a;
}

}  // namespace axon::data
