// Keras models as `model.to_json()` writes them, Sequential and functional,
// Keras 2's layout and Keras 3's, read into axon's layers (through the layer
// registry) and written back (Keras 3's layout, which Keras' model_from_json
// reads). docs/training.md lists the supported layers and settings; anything
// else is a UsageError naming the file, the layer (index, class, name) and
// the reason.
#pragma once

#include <axon/nn/model.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace axon::nn {

struct KerasModel {
  std::unique_ptr<Model> model;  // unbuilt; layers named as in the JSON
  Shape input_shape;             // [height, width, channels]
  Shape output_shape;            // [classes]
  // Its weights in model order ("conv2d/kernel" [3, 3, 1, 32], ...), known
  // before the model is built.
  std::vector<std::pair<std::string, Shape>> weights;
  // All layers' outputs of one sample together, in floats: what a training
  // step keeps for its backward at most.
  int64_t activations_per_sample = 0;
  int64_t parameters = 0;
};

// Parses `text` (from `source`, named in messages). Checks every layer's
// settings and shapes, the graph, and the model's size against the limits of
// axon/limits.hpp, before anything is allocated.
KerasModel model_from_keras_json(const std::string& text, const std::string& source);

// A UsageError when a training step of `batch` samples would need more
// than `memory_bytes`: the outputs of all layers kept for the backward, and
// the weights with their gradients and an optimizer's two slots. It names
// the batch size that fits.
void check_training_memory(const KerasModel& model, int64_t batch, double memory_bytes, const std::string& source);

// The model (built or not) as Keras 3's model.to_json() would write it: a
// Sequential when every layer reads the one before it, else a Functional.
std::string keras_json(Model& model, const Shape& images);

// The functional API's shape inference: the per-sample output shape of one
// layer (Keras' {"class_name", "config"}, JSON text) called on inputs of
// these shapes, the layer made and checked as the reader makes a model's.
// UsageError naming `source` and the layer (class and name) otherwise.
Shape keras_layer_output_shape(const std::string& layer_json, const std::vector<Shape>& inputs,
                               const std::string& source);

// The layers the reader knows, a Markdown table (docs/training.md shows it).
std::string supported_layers_table();

}  // namespace axon::nn
