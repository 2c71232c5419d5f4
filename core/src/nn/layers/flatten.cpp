// Flatten: a view of the same buffer, forward and backward.
#include "../layer_registry.hpp"

#include <axon/nn/layers.hpp>

namespace axon::nn {

void Flatten::write_config(KerasConfigWriter& c) const { c.string("data_format", "channels_last"); }

Shape Flatten::output_shape(std::span<const Shape> in) const { return {numel(in[0])}; }

Tensor Flatten::forward(std::span<const Tensor> in) { return in[0].reshaped({in[0].dim(0), numel(input_shape())}); }

void Flatten::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  Shape s{dy.dim(0)};
  s.insert(s.end(), input_shape().begin(), input_shape().end());
  dx[0] = dy.reshaped(std::move(s));
}

namespace {
std::unique_ptr<Layer> flatten_from_keras(const KerasLayerConfig& l) { return std::make_unique<Flatten>(l.name()); }
const LayerEntry kFlattenEntry{"Flatten", flatten_from_keras, "(no arguments)"};
const LayerRegistration kFlattenRegistered(kFlattenEntry);
}  // namespace
}  // namespace axon::nn
