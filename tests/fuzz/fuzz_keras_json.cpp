// The Keras model JSON reader behind --model on arbitrary bytes: it either
// returns a model within the limits or throws UsageError.
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    axon::nn::KerasModel k = axon::nn::model_from_keras_json(text, "fuzz-input");
    const auto layers = k.model->layers();
    if (layers.empty() || layers.size() > static_cast<size_t>(axon::limits::kMaxModelLayers)) std::abort();
    if (k.input_shape.size() != 3) std::abort();
    for (int64_t d : k.input_shape)
      if (d < 1 || d > axon::limits::kMaxImageSide) std::abort();
  } catch (const axon::UsageError&) {
  }
  return 0;
}
