// IDX files (the MNIST format): a big-endian header (magic 0x0000TTRR: type
// code TT, rank RR, then RR uint32 dimensions) followed by the elements. Only
// unsigned-byte arrays (type 0x08) are supported, raw or gzip-compressed.
//
// Everything a header claims is checked before memory is spent on it: the
// data it promises must be within limits::kMaxIdxDataBytes; a raw file must
// be exactly that long; a gzip file (one member or several) is inflated
// piece by piece, so memory follows the bytes really there, and must end
// exactly where the header says. A truncated, corrupt or lying file is a
// UsageError with one message naming the file and what is wrong, never a
// huge allocation or a crash.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

namespace axon::data {

struct IdxHeader {
  int rank = 0;
  std::vector<int64_t> dims;
  bool gzip = false;
  uint64_t payload_bytes() const;  // product of dims
};

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // dense row-major, product(dims) bytes
};

// Reads and validates the header only. `expected_rank` is 1 for labels, 3 for
// images; anything else is a UsageError. A raw file must hold exactly the
// bytes the header promises (a gzip file is checked when read).
IdxHeader read_idx_header(const std::filesystem::path& file, int expected_rank);

// Reads a whole uint8 IDX file of the given rank (validated as above).
IdxArray read_idx(const std::filesystem::path& file, int expected_rank);

}  // namespace axon::data
