// Rescaling: Scale, then BiasAdd of a vector of the offset (when not 0);
// backward Scale.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

Rescaling::Rescaling(float scale, float offset, std::string name)
    : Layer(std::move(name)), scale_(scale), offset_(offset) {
  if (!std::isfinite(scale) || !std::isfinite(offset)) throw UsageError("Rescaling: scale and offset must be numbers");
}

void Rescaling::write_config(KerasConfigWriter& c) const {
  c.number("scale", scale_);
  c.number("offset", offset_);
}

void Rescaling::on_build(Device& device, Rng&) {
  if (offset_ != 0.0f && !input_shape().empty())
    offsets_ = make_tensor(device, {input_shape().back()},
                           std::vector<float>(static_cast<size_t>(input_shape().back()), offset_));
}

Tensor Rescaling::forward(std::span<const Tensor> in) {
  Tensor y = take_like(in[0]);
  ops::scale(in[0], y, scale_, name());
  if (offsets_.defined()) ops::bias_add(y, offsets_, y, name());
  return y;
}

void Rescaling::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  dx[0] = take_like(dy);
  ops::scale(dy, dx[0], scale_, name());
}

namespace {
std::unique_ptr<Layer> rescaling_from_keras(const KerasLayerConfig& l) {
  for (const char* k : {"scale", "offset"})
    if (l.has(k) && !l.at(k).is_number()) l.fail(std::string(k) + " is " + json_text(l.at(k)) + "; axon takes one number");
  return std::make_unique<Rescaling>(l.float_number("scale", 1.0), l.float_number("offset", 0.0), l.name());
}
const LayerEntry kRescalingEntry{"Rescaling", rescaling_from_keras, "scale, offset (numbers)"};
const LayerRegistration kRescalingRegistered(kRescalingEntry);
}  // namespace
}  // namespace axon::nn
