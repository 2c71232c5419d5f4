// The Keras model JSON reader behind --model on arbitrary bytes (Sequential
// and functional, Keras 2's and 3's layouts): it either returns a model
// within the limits or throws UsageError; a model it returns is written back
// and reads again as the same graph, and its summary is printable.
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>

#include <cstdlib>
#include <string>

namespace {
// A model the reader accepted: written back, it must read again.
void round_trip(axon::nn::KerasModel& k) {
  try {
    const std::string written = axon::nn::keras_json(*k.model, k.input_shape);
    const axon::nn::KerasModel again = axon::nn::model_from_keras_json(written, "written");
    if (again.model->num_nodes() != k.model->num_nodes() || again.weights != k.weights) std::abort();
    for (int i = 0; i < k.model->num_nodes(); ++i)
      if (again.model->node_inputs(i) != k.model->node_inputs(i)) std::abort();
  } catch (const axon::UsageError&) {
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  axon::nn::KerasModel k;
  try {
    k = axon::nn::model_from_keras_json(text, "fuzz-input");
    const auto layers = k.model->layers();
    if (layers.empty() || layers.size() > static_cast<size_t>(axon::limits::kMaxModelLayers)) std::abort();
    if (k.input_shape.size() != 3) std::abort();
    for (int64_t d : k.input_shape)
      if (d < 1 || d > axon::limits::kMaxModelImageSide) std::abort();
    if (k.output_shape.size() != 1) std::abort();
    if (k.model->summary(k.input_shape).empty()) std::abort();
  } catch (const axon::UsageError&) {
    return 0;
  }
  round_trip(k);
  return 0;
}
