// Keras Sequential models as `model.to_json()` writes them, Keras 2's layout
// and Keras 3's, read into axon's layers and written back (Keras 3's layout,
// which Keras' `model_from_json` reads). Supported: the input shape,
// Conv2D, MaxPooling2D, Flatten, Dense, Dropout, ReLU, with the settings
// docs/training.md lists; anything else is a UsageError naming the layer,
// its index and what is supported.
#pragma once

#include <axon/nn/sequential.hpp>

#include <memory>
#include <string>

namespace axon::nn {

struct KerasModel {
  std::unique_ptr<Sequential> model;  // unbuilt; layers named as in the JSON
  Shape input_shape;                  // [height, width, channels]
  // Its weights in model order ("conv2d/kernel" [3, 3, 1, 32], ...), known
  // before the model is built.
  std::vector<std::pair<std::string, Shape>> weights;
};

// Parses `text` (from `source`, named in messages). Checks every layer's
// settings and shapes, and the model's size against the limits of
// axon/limits.hpp, before anything is allocated.
KerasModel model_from_keras_json(const std::string& text, const std::string& source);

// The model (built or not) as Keras 3's model.to_json() would write it.
std::string keras_json(Sequential& model, const Shape& input_shape);

}  // namespace axon::nn
