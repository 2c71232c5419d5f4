// A Keras `.keras` file (--model m.keras, keras::models::load_model) through
// what axon-train reads before it builds the model: the zip's config.json
// and model.weights.h5 (read_keras_archive), the model and its
// compile_config (optimizer, loss, metrics, learning-rate schedule) from
// config.json, and every weight from the HDF5 file at Keras' paths
// (keras_archive_weights). Each step either succeeds or throws UsageError;
// weights it returns are the model's count of finite floats.
//
// The input is the two members, not the zip: a 4-byte little-endian length,
// config.json, then model.weights.h5 (the rest). They are zipped here as
// Keras stores them, so mutations reach the JSON and the HDF5 bytes instead
// of failing the zip's checksums (fuzz_npz fuzzes the zip reader itself).
#include <axon/error.hpp>
#include <axon/io/zip_writer.hpp>
#include <axon/nn/keras_compile_config.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/weight_tensors.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

#include "check_message.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const size_t config_bytes =
      std::min<size_t>(size - 4, data[0] | data[1] << 8 | data[2] << 16 | static_cast<size_t>(data[3]) << 24);
  const std::string_view config(reinterpret_cast<const char*>(data) + 4, config_bytes);
  const std::string_view weights(reinterpret_cast<const char*>(data) + 4 + config_bytes, size - 4 - config_bytes);
  const std::string zip = axon::io::zip_stored({{"config.json", config}, {"model.weights.h5", weights}});

  const std::string name = "fuzz.keras";
  try {
    const axon::train::KerasArchive archive = axon::train::read_keras_archive(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(zip.data()), zip.size()), name, zip.size());
    if (archive.config_json != config ||
        std::string_view(reinterpret_cast<const char*>(archive.weights_h5.data()), archive.weights_h5.size()) !=
            weights)
      std::abort();  // the members come back as they went in
    axon::nn::KerasModel k = axon::nn::model_from_keras_json(archive.config_json, name + ": config.json");
    (void)axon::nn::read_compile_config(archive.config_json, name);
    const axon::train::WeightLayout layout = axon::train::WeightLayout::packed(k.weights);
    // axon-train builds the model (its weights within the limits) before it
    // reads them; here a weights file smaller than the model's floats cannot
    // hold them (axon's HDF5 reader takes contiguous, unfiltered data only),
    // so such a model is not given a buffer of its size.
    if (static_cast<uint64_t>(layout.floats) * sizeof(float) > archive.weights_h5.size()) return 0;
    const std::vector<float> flat = axon::train::keras_archive_weights(archive, layout, name);
    if (static_cast<int64_t>(flat.size()) != layout.floats) std::abort();
    for (float v : flat)
      if (!std::isfinite(v)) std::abort();  // the reader refuses NaN and Inf
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  return 0;
}
