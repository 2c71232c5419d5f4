// Dropout and SpatialDropout2D: a host-drawn mask applied with ops every
// plugin has (Scale, then ReluGrad with the mask as its "activation": the
// value where the mask is 1, 0 where it is 0). A Dropout op in the ABI would
// save the mask's upload (batch x features floats a step, 400 KB for 64 x
// 1,600) but every plugin would need it; this keeps the ABI as it is.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Dropout::Dropout(float rate, std::string name, bool spatial) : Layer(std::move(name)), rate_(rate), spatial_(spatial) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw UsageError("Dropout: rate must be from 0 to below 1");
}

std::unique_ptr<Layer> Dropout::clone() const { return std::make_unique<Dropout>(rate_, name(), spatial_); }

void Dropout::write_config(KerasConfigWriter& c) const {
  c.number("rate", rate_);
  c.null("seed");
  if (!spatial_) c.null("noise_shape");
}

Shape Dropout::output_shape(std::span<const Shape> in) const {
  if (spatial_ && in[0].size() != 3)
    throw UsageError("needs a [height, width, channels] input, gets " + shape_string(in[0]));
  return in[0];
}

void Dropout::on_build(Device&, Rng& rng) {
  // The mask stream's seed comes from the model's random source, so the
  // masks follow --seed like the initial weights do.
  masks_ = Rng(rng.next_u64());
}

Tensor Dropout::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  mask_ = Tensor();
  if (!training() || rate_ <= 0.0f) return x;
  const int64_t n = x.dim(0);
  Tensor mask = take(n, input_shape());
  host_mask_.resize(static_cast<size_t>(mask.numel()));
  if (spatial_) {
    // One draw per (sample, channel), the same mask over the image.
    const int64_t c = input_shape()[2], pixels = input_shape()[0] * input_shape()[1];
    for (int64_t s = 0; s < n; ++s)
      for (int64_t k = 0; k < c; ++k) {
        const float keep = masks_.uniform01() >= rate_ ? 1.0f : 0.0f;
        for (int64_t p = 0; p < pixels; ++p) host_mask_[static_cast<size_t>((s * pixels + p) * c + k)] = keep;
      }
  } else {
    for (float& m : host_mask_) m = masks_.uniform01() >= rate_ ? 1.0f : 0.0f;
  }
  mask.copy_from_host(host_mask_.data(), host_mask_.size() * sizeof(float));
  Tensor scaled = take_like(x);
  ops::scale(x, scaled, 1.0f / (1.0f - rate_), name());
  Tensor y = take_like(x);
  ops::relu_grad(scaled, mask, y, name());
  if (remembers()) mask_ = mask;
  return y;
}

void Dropout::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    if (!mask_.defined()) {
      dx[0] = dy;
    } else {
      if (mask_.shape() != dy.shape()) throw RuntimeError("Dropout " + name() + ": backward of another batch than the forward");
      Tensor scaled = take_like(dy);
      ops::scale(dy, scaled, 1.0f / (1.0f - rate_), name());
      dx[0] = take_like(dy);
      ops::relu_grad(scaled, mask_, dx[0], name());
    }
  }
  mask_ = Tensor();
}

namespace {

std::unique_ptr<Layer> with_rate(const KerasLayerConfig& l, bool spatial) {
  if (!l.has("rate") || !l.at("rate").is_number()) l.fail("has no rate");
  const double rate = l.at("rate").get<double>();
  // Also as the float the layer keeps (0.99999999 is 1 as a float).
  if (!(rate >= 0 && rate < 1 && static_cast<float>(rate) < 1)) l.fail("rate is " + json_text(l.at("rate")) + ", not from 0 to below 1");
  return std::make_unique<Dropout>(static_cast<float>(rate), l.name(), spatial);
}

std::unique_ptr<Layer> dropout_from_keras(const KerasLayerConfig& l) {
  l.require_null({"noise_shape"});
  return with_rate(l, false);
}
std::unique_ptr<Layer> spatial_from_keras(const KerasLayerConfig& l) { return with_rate(l, true); }

const LayerEntry kDropout{"Dropout", dropout_from_keras, "rate; noise_shape null (the mask is axon's own draw)"};
const LayerEntry kSpatial{"SpatialDropout2D", spatial_from_keras, "rate (one draw per sample and channel)"};
const LayerRegistration kRegisteredDropout(kDropout);
const LayerRegistration kRegisteredSpatial(kSpatial);

}  // namespace
}  // namespace axon::nn
