// Keras 3 records arithmetic and keras.ops calls on a functional model's
// tensors (MobileNetV3's hard sigmoid is `ReLU(6.0)(x + 3.0) * (1.0 / 6.0)`)
// as operations of keras.src.ops in the model's layer list: {"module":
// "keras.src.ops.numpy", "class_name": "Add"}, the tensors and numbers
// among the node's args, settings (an axis) in the config. axon reads an
// operation on a tensor and a number as a Rescaling (x * scale + offset,
// which --save writes back), one on two tensors as the merge layer of the
// same arithmetic, and the others (activations, concatenate, reshape, mean
// and max over height and width) as the Keras layer that computes them;
// gelu's tanh approximation, which no layer computes, as an Activation
// layer that --save writes back as the call.
#pragma once

#include "keras_config.hpp"

#include <axon/nn/layer.hpp>

#include <memory>
#include <string>
#include <vector>

namespace axon::nn {

// Whether a layer list entry is such an operation (its module is keras.src.ops.*).
bool is_keras_operation(const json& layer);
// The layer that computes it; UsageError through config.fail() for an
// operation or arguments axon does not read.
std::unique_ptr<Layer> layer_for_operation(const KerasLayerConfig& config);
// The operations axon reads, for messages and the docs.
const char* keras_operations();

}  // namespace axon::nn
