// The weights files written by `axon-train --save` (docs/training.md), in one
// of two formats chosen by the file's extension:
//
// FILE.safetensors: safetensors (axon/io/safetensors.hpp) with one tensor per
// weight under its Keras name ("conv2d/kernel") in Keras' layouts
// (axon/train/weight_tensors.hpp), and metadata: the model's Keras JSON
// ("model") and the training settings. NumPy, PyTorch and Keras users read
// it with the `safetensors` package.
//
// Any other name: axon's own format,
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
//
// FILE.keras: Keras 3's own file (axon/train/keras_file.hpp), the model's
// config and its compile_config (metadata "model" and "compile_config")
// beside the weights and the optimizer's state; Keras' load_model opens it.
#pragma once

#include <axon/nn/model.hpp>
#include <axon/train/weight_tensors.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace axon::train {

inline constexpr char kWeightsMagic[8] = {'A', 'X', 'O', 'N', 'W', 'T', 'S', '1'};

// Key -> value, kept in a safetensors file's metadata (the other format has none).
using WeightsMetadata = std::map<std::string, std::string>;

// Whether `file` is written and read as safetensors (its extension).
bool is_safetensors_file(const std::filesystem::path& file);

// The file's bytes for the model's current parameters (reads them from the device).
std::string serialize_weights(nn::Model& model);
std::string serialize_safetensors_weights(nn::Model& model, const WeightsMetadata& metadata);
// Writes them atomically (temp file + rename), in the format of the extension.
void save_weights(nn::Model& model, const std::filesystem::path& file, const WeightsMetadata& metadata = {});

// The largest weights file worth reading for a model of these weights, in the
// format of `file` (a bigger one is refused unread).
uint64_t max_weights_file_bytes(const WeightLayout& layout, const std::filesystem::path& file);
// Whether a weights file's bytes fit weights of this layout (no device
// needed: checked before any work); UsageError as set_weights.
void check_weights(const WeightLayout& layout, const std::string& bytes, const std::filesystem::path& file);
// Sets every replica's weights from a weights file's bytes (read from `file`,
// named in messages, whose extension says the format). A UsageError names
// the file and the first mismatch (magic, checksum, a tensor's name, dtype or
// shape, a tensor the model lacks, a value that is not finite); the model is
// untouched then.
void set_weights(nn::Model& model, const std::string& bytes, const std::filesystem::path& file);
// Reads the file (a regular file of at most max_weights_file_bytes) and sets them.
void load_weights(nn::Model& model, const std::filesystem::path& file);

}  // namespace axon::train
