// Keras 3's `.keras` file, as model.save("m.keras") writes it: a zip of
// config.json (the model's config, as model.to_json() gives it, plus its
// compile_config), model.weights.h5 (the weights, HDF5) and metadata.json.
// axon reads the model from config.json and the weights from the HDF5 file,
// and writes all three (`--save m.keras`) so that keras.models.load_model
// opens the file, compiled, with the optimizer's state. In the HDF5 file,
// where Keras files each layer's variables under a path of its own: the
// snake_case of the layer's class, numbered in the model's layer order
// ("layers/conv2d/vars/0" is the first Conv2D's kernel, "layers/conv2d_1/..."
// the second's), not under the layer's name.
#pragma once

#include <axon/nn/model.hpp>
#include <axon/train/weight_tensors.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace axon::train {

struct KerasArchive {
  std::string config_json;          // config.json
  std::vector<uint8_t> weights_h5;  // model.weights.h5
};

// Whether `file` is a .keras file (its extension).
bool is_keras_file(const std::filesystem::path& file);

// The archive's parts from its bytes; UsageError naming the file when it is
// not a zip, lacks config.json or model.weights.h5, or a part is larger than
// max_weights_bytes (the weights) or the model JSON limit (the config).
KerasArchive read_keras_archive(std::span<const uint8_t> bytes, const std::string& name, uint64_t max_weights_bytes);

// config.json of a .keras file on disk (the weights are not read).
std::string read_keras_config(const std::filesystem::path& file);

// Keras' path of each layer's variables: the layers of config.json in order
// (InputLayer aside), each named by its class in snake_case ("conv2d",
// "batch_normalization", "re_lu"), numbered from the second of a class on.
// Pairs of (layer name, "layers/conv2d").
std::vector<std::pair<std::string, std::string>> keras_weight_paths(const std::string& config_json,
                                                                    const std::string& name);

// The flat buffer of `layout` (a model's weights, layer by layer) from the
// archive: layer L's i-th weight from <its path>/vars/<i>, each checked for
// shape, type, finite values, and the layer holding exactly as many. A
// UsageError names the file and the first weight that does not fit.
std::vector<float> keras_archive_weights(const KerasArchive& archive, const WeightLayout& layout,
                                         const std::string& name);

// The .keras file's bytes for the model's current weights. `config_json` is
// config.json: the model's Keras config (nn::keras_json) with its
// compile_config. model.weights.h5 holds every layer's weights at Keras'
// paths and, under optimizer/vars, the optimizer's variables in Keras' order
// (iterations, the learning rate unless the compile_config gives a schedule,
// the slots, per weight as Keras interleaves them). NonFiniteWeights when a
// value is not finite.
std::string serialize_keras_file(nn::Model& model, const std::string& config_json);

// The optimizer's state from the archive's optimizer/vars, laid out as
// serialize_keras_file writes it and Keras 3 saves it: the step count and
// every slot, set on every replica (the learning rate stays the one the run
// was given; Nadam's momentum cache follows from the step count). False,
// changing nothing, when the file holds no optimizer variables or not as
// many as this optimizer keeps in Keras (another optimizer or setting: Keras
// skips them then too, with a warning); UsageError naming the variable when
// one has the wrong shape or type or a value that is not finite.
bool set_keras_optimizer_state(nn::Model& model, const KerasArchive& archive, const std::string& name);

}  // namespace axon::train
