// NumPy's .npy format (numpy.lib.format, versions 1.0 to 3.0): the magic
// "\x93NUMPY", a version, the header's length, and a header that is a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (N, H, W), }
// followed by the raw elements. The header is parsed as data, never
// evaluated; an object array ('O', which only pickle can read) is refused as
// NumPy's allow_pickle=False refuses it, and so are structured dtypes.
#pragma once

#include <axon/data/byte_stream.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace axon::data {

struct NpyHeader {
  std::string descr;   // as written: "<f4", "|u1"
  char kind = 0;       // 'u' unsigned, 'i' signed, 'f' float, 'b' bool, 'c' complex, ...
  int item_bytes = 0;  // bytes per element
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<int64_t> shape;
  uint64_t header_bytes = 0;  // where the data starts
  uint64_t elements() const;
  uint64_t data_bytes() const { return elements() * static_cast<uint64_t>(item_bytes); }
  // "uint8", "float64 (big-endian)", "<U10": for messages.
  std::string dtype_name() const;
};

// NumPy's own limit on a header's length (numpy.lib.format's _MAX_HEADER_SIZE).
inline constexpr uint64_t kMaxNpyHeaderBytes = 10000;

// Parses the header at the start of `bytes`, which must hold at least all of
// it. `what` names the file in messages. UsageError for anything malformed,
// an object or structured dtype, a negative dimension, or data of more than
// max_data_bytes.
NpyHeader parse_npy_header(std::string_view bytes, const std::string& what, uint64_t max_data_bytes);

// Reads the header from the stream (consuming it).
NpyHeader read_npy_header(ByteStream& in, uint64_t max_data_bytes);

// Reads the data after the header, calling take(bytes, n) on consecutive
// pieces (each a whole number of elements), then checks the stream ends there.
void read_npy_data(ByteStream& in, const NpyHeader& h, const std::function<void(const uint8_t*, size_t)>& take);

}  // namespace axon::data
