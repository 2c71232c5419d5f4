// A writer of the HDF5 files Keras 3 keeps weights in (`model.weights.h5`
// inside a `.keras` file), in the layout h5py writes by default and
// keras.models.load_model reads: superblock version 0 with 8-byte addresses,
// version-1 object headers, every group a symbol table (a version-1 B-tree
// over symbol-table nodes and a local heap), every dataset contiguous,
// little-endian float32 or int64. No attributes, no compression, no chunks:
// Keras reads none of them. The reader (hdf5.hpp) reads all of it back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace axon::io {

class Hdf5Writer {
 public:
  Hdf5Writer();
  ~Hdf5Writer();
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;

  // A group at `path` ("layers/flatten/vars") and those above it; adding one
  // twice is harmless.
  void add_group(const std::string& path);
  // A float32 dataset of `shape` ([] for a scalar) at `path`
  // ("layers/conv2d/vars/0"), its groups made as needed. RuntimeError for a
  // path already taken, an empty name, or values that do not fill the shape.
  void add_floats(const std::string& path, const std::vector<int64_t>& shape, std::span<const float> values);
  // A scalar int64 dataset (a Keras optimizer's iterations).
  void add_int64(const std::string& path, int64_t value);

  // The whole file.
  std::string bytes() const;

  struct Node;

 private:
  Node& node_at(const std::string& path, bool dataset);
  std::unique_ptr<Node> root_;
};

}  // namespace axon::io
