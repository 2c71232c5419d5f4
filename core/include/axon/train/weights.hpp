// The weights file written by `axon-train --save` (docs/training.md):
//
//   "AXONWTS1"                       8 bytes, magic
//   uint32 version = 1, uint32 count (little-endian, as every number here)
//   count times:
//     uint32 name length, name bytes ("conv2d/kernel", no terminator)
//     uint32 dtype (0 = float32), uint32 rank, int64 dims[rank]
//     float32 values[prod(dims)], row-major (Conv2D kernels HWIO, Dense [in, out])
//   uint32 CRC-32 (zlib polynomial) of every byte before it
//
// Tensors appear in model order (layer by layer, kernel before bias), the
// order and layouts of Keras' model.get_weights().
#pragma once

#include <axon/nn/sequential.hpp>

#include <filesystem>
#include <string>

namespace axon::train {

inline constexpr char kWeightsMagic[8] = {'A', 'X', 'O', 'N', 'W', 'T', 'S', '1'};

// The file's bytes for the model's current parameters (reads them from the device).
std::string serialize_weights(nn::Sequential& model);
// Writes them atomically (temp file + rename).
void save_weights(nn::Sequential& model, const std::filesystem::path& file);
// Loads weights saved from a model of the same architecture; a UsageError
// names the file and the first mismatch (magic, checksum, name, shape).
void load_weights(nn::Sequential& model, const std::filesystem::path& file);

}  // namespace axon::train
