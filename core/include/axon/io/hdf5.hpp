// A reader for the HDF5 files Keras 3 keeps weights in (`model.weights.h5`
// inside a `.keras` file, written by h5py with HDF5's default, earliest
// format): superblock version 0 or 1 with 8-byte addresses, version-1
// object headers (continuations followed), groups as symbol tables (a
// version-1 B-tree of symbol-table nodes and a local heap) or as compact link
// messages, and datasets of little-endian IEEE floats or integers, stored
// contiguous or compact. Anything else (compression, chunks, the newer
// object headers of libver='latest', external files) is refused by name.
//
// The file is treated as hostile: every address and length is checked
// against the bytes there are before it is followed, a group reached twice
// (a cycle or a shared child) is refused, and the counts of objects, group
// entries, message blocks and nesting are capped, so a malformed file costs
// at most a few passes over its bytes and ends in one UsageError
// ("m.keras: model.weights.h5: malformed HDF5: ... at byte N").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace axon::io {

struct Hdf5Dataset {
  std::string path;            // "layers/conv2d/vars/0"
  std::vector<int64_t> shape;  // [] for a scalar
  char kind = 'f';             // 'f' IEEE float, 'i' signed, 'u' unsigned integer
  int element_bytes = 4;
  uint64_t offset = 0;         // where its data starts in the file's bytes
  uint64_t elements() const;
};

struct Hdf5Limits {
  size_t max_objects = 100000;  // groups and datasets in all
  size_t max_depth = 32;        // groups within groups
  size_t max_rank = 8;
};

class Hdf5File {
 public:
  // Parses the whole tree of `bytes` (kept by reference: they must outlive
  // this object). `name` is what messages call the file.
  Hdf5File(std::span<const uint8_t> bytes, std::string name, Hdf5Limits limits = {});
  // Every dataset, in the file's order (each group's entries sorted by name,
  // as HDF5 keeps them).
  const std::vector<Hdf5Dataset>& datasets() const { return datasets_; }
  const Hdf5Dataset* find(const std::string& path) const;
  // The dataset's values as float32 (float64 and integers converted).
  std::vector<float> floats(const Hdf5Dataset& d) const;
  // A scalar or one-element integer dataset's value (an optimizer's iterations).
  int64_t integer(const Hdf5Dataset& d) const;
  const std::string& name() const { return name_; }

 private:
  std::span<const uint8_t> bytes_;
  std::string name_;
  std::vector<Hdf5Dataset> datasets_;
};

}  // namespace axon::io
