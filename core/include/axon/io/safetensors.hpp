// The safetensors format (Hugging Face's; NumPy, PyTorch and Keras read it):
//
//   uint64 N, little-endian        the header's length
//   N bytes of JSON                {"__metadata__": {"key": "value", ...},
//                                   "conv2d/kernel": {"dtype": "F32", "shape": [3, 3, 1, 32],
//                                                     "data_offsets": [0, 1152]}, ...}
//   the data                       every tensor's bytes, little-endian, row-major,
//                                  at [begin, end) of this section
//
// The writer pads the header with spaces so the data starts at a multiple of
// 8 bytes, as the reference writer does. The reader treats the file as
// hostile: header length within a cap and within the file, strict JSON
// without duplicate keys, known dtypes, shapes whose byte count matches
// their offsets without overflow, and offsets that tile the data section
// exactly (no overlap, no hole, nothing past the end). Metadata values are
// strings, as the format requires. Optionally the writer adds a CRC-32 over
// everything else (metadata key "axon_crc32"), which the reader can check.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace axon::io {

// A tensor's entry in the header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype;           // "F32", "I64", "U8", ...
  std::vector<int64_t> shape;  // [] for a scalar
  uint64_t begin = 0, end = 0; // bytes of the data section
};

struct SafetensorsLimits {
  uint64_t max_header_bytes = uint64_t{16} << 20;
  size_t max_tensors = 100000;
  size_t max_rank = 8;
};

// Bytes per element of a dtype name; 0 when unknown.
size_t safetensors_dtype_size(std::string_view dtype);

class SafetensorsWriter {
 public:
  // `bytes` must be numel(shape) * dtype size long (UsageError otherwise).
  void add(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
           std::string_view bytes);
  void add_f32(const std::string& name, const std::vector<int64_t>& shape, std::span<const float> values);
  void set_metadata(const std::string& key, const std::string& value);
  // The file's bytes; with_checksum adds "axon_crc32" to the metadata.
  std::string bytes(bool with_checksum = true) const;

 private:
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsEntry> entries_;
  std::string data_;
};

class SafetensorsFile {
 public:
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // In data order.
  const std::vector<SafetensorsEntry>& tensors() const { return entries_; }
  const SafetensorsEntry* find(const std::string& name) const;
  std::string_view data(const SafetensorsEntry& e) const;
  // A float32 tensor's values; UsageError naming it when it is absent or
  // has another dtype or shape.
  std::vector<float> f32(const std::string& name, const std::vector<int64_t>& shape) const;
  // A metadata value; UsageError when it is absent.
  const std::string& meta(const std::string& key) const;
  // Whether the file has "axon_crc32" and it matches.
  bool has_checksum() const;
  bool checksum_ok() const;

 private:
  friend SafetensorsFile parse_safetensors(std::string bytes, const SafetensorsLimits& limits);
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsEntry> entries_;
  std::string bytes_;
  size_t data_start_ = 0;
};

// Parses a whole file's bytes. UsageError naming the first problem found
// (without a file name: the caller adds it).
SafetensorsFile parse_safetensors(std::string bytes, const SafetensorsLimits& limits = {});

}  // namespace axon::io
