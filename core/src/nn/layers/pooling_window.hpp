// The window MaxPooling2D and AveragePooling2D share: its checks, Keras
// config (both ways) and output shape.
#pragma once

#include "../layer_registry.hpp"

#include <axon/nn/layers.hpp>

#include <optional>
#include <utility>

namespace axon::nn {

// The window's attributes; UsageError naming the layer type when a size is not positive.
axon_pool_attrs pool_window(const char* type, Size2 pool_size, std::optional<Size2> strides, axon_padding padding);
void write_pool_window(KerasConfigWriter& config, const axon_pool_attrs& attrs);
Shape pooled_shape(const axon_pool_attrs& attrs, const Shape& input);

// pool_size, strides (default: pool_size) and padding of a Keras config.
struct KerasPoolWindow {
  Size2 pool_size, strides;
  axon_padding padding;
};
KerasPoolWindow pool_window_from_keras(const KerasLayerConfig& l);

}  // namespace axon::nn
