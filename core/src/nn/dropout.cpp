// Dropout: a host-drawn mask applied with ops every plugin has (Scale, then
// ReluGrad with the mask as its "activation": the value where the mask is 1,
// 0 where it is 0). A Dropout op in the ABI would save the mask's upload
// (batch x features floats a step, 400 KB for 64 x 1,600) but every plugin
// would need it; this keeps the ABI as it is.
#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
enum Slot { kScaled, kMask, kY, kDx };
}

Dropout::Dropout(float rate, std::string name) : Layer(std::move(name)), rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw UsageError("Dropout: rate must be from 0 to below 1");
}

Shape Dropout::do_build(const Shape& in, Device&, Rng& rng) {
  // The mask stream's seed comes from the model's random source, so the
  // masks follow --seed like the initial weights do.
  masks_ = Rng(rng.next_u64());
  return in;
}

const Tensor& Dropout::forward(const Tensor& x) {
  dropped_ = training() && rate_ > 0.0f;
  if (!dropped_) return x;
  const int64_t n = x.dim(0);
  Tensor& mask = buffer(kMask, n, input_shape());
  host_mask_.resize(static_cast<size_t>(mask.numel()));
  for (float& m : host_mask_) m = masks_.uniform01() >= rate_ ? 1.0f : 0.0f;
  mask.copy_from_host(host_mask_.data(), host_mask_.size() * sizeof(float));
  mask_batch_ = n;
  Tensor& scaled = buffer(kScaled, n, input_shape());
  ops::scale(x, scaled, 1.0f / (1.0f - rate_), name());
  Tensor& y = buffer(kY, n, input_shape());
  ops::relu_grad(scaled, mask, y, name());
  return y;
}

const Tensor& Dropout::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  if (!need_dx) return none();
  if (!dropped_) return dy;
  const int64_t n = x.dim(0);
  if (n != mask_batch_) throw RuntimeError("Dropout " + name() + ": backward of another batch than the forward");
  Tensor& scaled = buffer(kScaled, n, input_shape());
  ops::scale(dy, scaled, 1.0f / (1.0f - rate_), name());
  Tensor& dx = buffer(kDx, n, input_shape());
  ops::relu_grad(scaled, buffer(kMask, n, input_shape()), dx, name());
  return dx;
}

}  // namespace axon::nn
