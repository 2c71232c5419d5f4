// Dropout and SpatialDropout2D: a host-drawn mask applied with ops every
// plugin has (Scale, then ReluGrad with the mask as its "activation": the
// value where the mask is 1, 0 where it is 0). A Dropout op in the ABI would
// save the mask's upload (batch x features floats a step, 400 KB for 64 x
// 1,600) but every plugin would need it; this keeps the ABI as it is.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>

namespace axon::nn {

Dropout::Dropout(float rate, std::string name, bool spatial, Shape noise_shape)
    : Layer(std::move(name)), rate_(rate), spatial_(spatial), noise_shape_(std::move(noise_shape)) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw UsageError("Dropout: rate must be from 0 to below 1");
  if (spatial_) noise_shape_ = {1, 1, -1};
  for (int64_t d : noise_shape_)
    if (d < 1 && d != -1) throw UsageError("Dropout: noise_shape sizes must be at least 1 (or -1: the input's)");
}

std::unique_ptr<Layer> Dropout::clone() const {
  return std::make_unique<Dropout>(rate_, name(), spatial_, spatial_ ? Shape{} : noise_shape_);
}

void Dropout::write_config(KerasConfigWriter& c) const {
  c.number("rate", rate_);
  c.null("seed");
  if (spatial_) return;
  if (noise_shape_.empty()) {
    c.null("noise_shape");
    return;
  }
  json n = json::array({nullptr});
  for (int64_t d : noise_shape_) n.push_back(d == -1 ? json(nullptr) : json(d));
  c.impl().config["noise_shape"] = n;
}

Shape Dropout::output_shape(std::span<const Shape> in) const {
  if (spatial_ && in[0].size() != 3)
    throw UsageError("needs a [height, width, channels] input, gets " + shape_string(in[0]));
  if (!spatial_ && !noise_shape_.empty()) {
    if (noise_shape_.size() != in[0].size())
      throw UsageError("its noise_shape has " + std::to_string(noise_shape_.size() + 1) + " sizes, its input " +
                       shape_string(in[0]) + " " + std::to_string(in[0].size() + 1) + " with the batch");
    for (size_t i = 0; i < in[0].size(); ++i)
      if (noise_shape_[i] != -1 && noise_shape_[i] != 1 && noise_shape_[i] != in[0][i])
        throw UsageError("its noise_shape size " + std::to_string(noise_shape_[i]) + " is neither 1 nor the input's " +
                         std::to_string(in[0][i]) + " (input " + shape_string(in[0]) + ")");
  }
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
  const Shape& shape = input_shape();
  Shape drawn = shape;  // one sample's draws: 1 on the axes a draw covers
  for (size_t i = 0; i < noise_shape_.size(); ++i)
    if (noise_shape_[i] == 1) drawn[i] = 1;
  if (drawn == shape) {
    for (float& m : host_mask_) m = masks_.uniform01() >= rate_ ? 1.0f : 0.0f;
  } else {
    // Each sample's draws in order, then spread over the axes they cover
    // (an odometer over the sample's indices, the draw's index alongside).
    const int64_t per_sample = numel(shape), rank = static_cast<int64_t>(shape.size());
    draws_.resize(static_cast<size_t>(numel(drawn)));
    std::vector<int64_t> index(shape.size()), stride(shape.size());
    for (int64_t i = rank - 1, st = 1; i >= 0; --i) {
      stride[static_cast<size_t>(i)] = drawn[static_cast<size_t>(i)] == 1 ? 0 : st;
      st *= drawn[static_cast<size_t>(i)];
    }
    for (int64_t s = 0; s < n; ++s) {
      for (float& d : draws_) d = masks_.uniform01() >= rate_ ? 1.0f : 0.0f;
      std::fill(index.begin(), index.end(), 0);
      int64_t at = 0;
      float* out = host_mask_.data() + s * per_sample;
      for (int64_t p = 0; p < per_sample; ++p) {
        out[p] = draws_[static_cast<size_t>(at)];
        for (int64_t i = rank - 1; i >= 0; --i) {
          const auto u = static_cast<size_t>(i);
          at += stride[u];
          if (++index[u] < shape[u]) break;
          at -= stride[u] * shape[u];
          index[u] = 0;
        }
      }
    }
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

std::unique_ptr<Layer> with_rate(const KerasLayerConfig& l, bool spatial, Shape noise_shape = {}) {
  return std::make_unique<Dropout>(l.rate(), l.name(), spatial, std::move(noise_shape));
}

// noise_shape: null, or [null, sizes...] with null or a size per axis.
std::unique_ptr<Layer> dropout_from_keras(const KerasLayerConfig& l) {
  const json& n = l.at_or_null("noise_shape");
  if (n.is_null()) return with_rate(l, false);
  if (!n.is_array() || n.size() < 2 || n.size() > 8 || !n[0].is_null())
    l.fail("noise_shape is " + json_text(n) + "; axon takes null or [null, a size or null per axis]");
  Shape noise;
  for (size_t i = 1; i < n.size(); ++i)
    noise.push_back(n[i].is_null() ? -1 : l.integer(n[i], "noise_shape", 1, limits::kMaxLayerOutputsPerSample));
  return with_rate(l, false, std::move(noise));
}
std::unique_ptr<Layer> spatial_from_keras(const KerasLayerConfig& l) { return with_rate(l, true); }

const LayerEntry kDropout{"Dropout", dropout_from_keras,
                          "rate; noise_shape (1 where one draw covers the axis; the mask is axon's own draw)"};
const LayerEntry kSpatial{"SpatialDropout2D", spatial_from_keras, "rate (one draw per sample and channel)"};
const LayerRegistration kRegisteredDropout(kDropout);
const LayerRegistration kRegisteredSpatial(kSpatial);

}  // namespace
}  // namespace axon::nn
