// IDX reader: header validation first, then one read of exactly the promised
// bytes. See axon/data/idx.hpp for the rules.
#include <axon/data/idx.hpp>
#include <axon/error.hpp>

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <system_error>

namespace axon::data {
namespace {

constexpr int kUbyteType = 0x08;
// Far above any real data set (60000 * 28 * 28 = 47 MB) and small enough that a
// lying header can never make us allocate something absurd.
constexpr uint64_t kMaxPayload = uint64_t{1} << 34;

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

// A byte source over a raw or gzip file with the same three operations.
class Source {
 public:
  explicit Source(const std::filesystem::path& file) : file_(file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) bad(file, "not a regular file");
    file_size_ = std::filesystem::file_size(file, ec);
    if (ec) bad(file, "cannot read its size: " + ec.message());
    unsigned char magic[2] = {0, 0};
    {
      std::ifstream in(file, std::ios::binary);
      if (!in) bad(file, "cannot open: " + std::string(std::strerror(errno)));
      in.read(reinterpret_cast<char*>(magic), 2);
    }
    gzip_ = file_size_ >= 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (gzip_) {
      if (file_size_ < 18) bad(file, "truncated gzip file (" + std::to_string(file_size_) + " bytes)");
      // ISIZE: the uncompressed size modulo 2^32, little-endian, in the last 4 bytes.
      std::ifstream in(file, std::ios::binary);
      in.seekg(static_cast<std::streamoff>(file_size_ - 4));
      unsigned char t[4];
      in.read(reinterpret_cast<char*>(t), 4);
      if (!in) bad(file, "cannot read the gzip trailer");
      isize_ = uint32_t{t[0]} | (uint32_t{t[1]} << 8) | (uint32_t{t[2]} << 16) | (uint32_t{t[3]} << 24);
      gz_ = gzopen(file.c_str(), "rb");
      if (gz_ == nullptr) bad(file, "cannot open: " + std::string(std::strerror(errno)));
      gzbuffer(gz_, 1 << 17);
    } else {
      raw_.open(file, std::ios::binary);
      if (!raw_) bad(file, "cannot open: " + std::string(std::strerror(errno)));
    }
  }
  ~Source() {
    if (gz_ != nullptr) gzclose(gz_);
  }
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  bool gzip() const { return gzip_; }

  // Checks the source holds exactly `total` bytes (header included) before
  // the caller allocates anything for them.
  void expect_total(uint64_t total, uint64_t payload) const {
    if (gzip_) {
      if ((total & 0xffffffffu) != isize_)
        bad(file_, "the header promises " + std::to_string(payload) + " data bytes (" + std::to_string(total) +
                       " uncompressed) but the gzip size field (the file's last 4 bytes) reads " +
                       std::to_string(isize_) + ": the file is truncated or corrupt");
    } else if (file_size_ != total) {
      if (file_size_ < total)
        bad(file_, "truncated: the header promises " + std::to_string(payload) + " data bytes but the file has only " +
                       std::to_string(file_size_ - (total - payload)) + " after the header");
      bad(file_, "has " + std::to_string(file_size_ - total) + " bytes after the " + std::to_string(payload) +
                     " data bytes the header promises");
    }
  }

  // Reads exactly n bytes; a short read is a "truncated" UsageError.
  void read(void* dst, uint64_t n, const char* what) {
    auto* out = static_cast<unsigned char*>(dst);
    uint64_t done = 0;
    while (done < n) {
      uint64_t want = std::min<uint64_t>(n - done, 1u << 30);
      int64_t got = 0;
      if (gzip_) {
        int r = gzread(gz_, out + done, static_cast<unsigned>(want));
        if (r < 0) gz_fail();
        got = r;
      } else {
        raw_.read(reinterpret_cast<char*>(out + done), static_cast<std::streamsize>(want));
        got = raw_.gcount();
      }
      if (got == 0) {
        if (gzip_) gz_fail();  // reports a stream error when there is one
        bad(file_, std::string("truncated: ends inside the ") + what + " after " + std::to_string(done) + " of " +
                       std::to_string(n) + " bytes");
      }
      done += static_cast<uint64_t>(got);
    }
  }

  // After the payload: a gzip stream must end here with a valid CRC.
  void expect_end() {
    if (!gzip_) return;
    unsigned char extra;
    int r = gzread(gz_, &extra, 1);
    if (r < 0) gz_fail();
    if (r > 0) bad(file_, "has data after the bytes the header promises");
  }

 private:
  [[noreturn]] void gz_fail() {
    int code = Z_OK;
    const char* msg = gzerror(gz_, &code);
    if (code != Z_OK && code != Z_STREAM_END)
      bad(file_, std::string("corrupt gzip data: ") + (msg ? msg : "unknown zlib error"));
    bad(file_, "truncated gzip data");
  }

  std::filesystem::path file_;
  uint64_t file_size_ = 0;
  bool gzip_ = false;
  uint32_t isize_ = 0;
  gzFile gz_ = nullptr;
  std::ifstream raw_;
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
    uint32_t d = big_endian_u32(dims + 4 * i);
    if (d == 0) bad(file, "dimension " + std::to_string(i) + " is 0");
    h.dims.push_back(d);
    payload *= d;  // cannot overflow: each factor < 2^32 and we stop above 2^34
    if (payload > kMaxPayload)
      bad(file, "the header's dimensions promise more than " + std::to_string(kMaxPayload) + " bytes");
  }
  src.expect_total(4 + 4 * static_cast<uint64_t>(h.rank) + payload, payload);
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
  a.data.resize(h.payload_bytes());
  src.read(a.data.data(), a.data.size(), "data");
  src.expect_end();
  return a;
}

}  // namespace axon::data
