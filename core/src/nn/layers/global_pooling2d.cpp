// GlobalAveragePooling2D and GlobalMaxPooling2D: AvgPool / MaxPool with a
// window of the whole image, then a view without the 1x1; backward
// AvgPoolGrad / MaxPoolGrad.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

GlobalPooling2D::GlobalPooling2D(bool max, bool keepdims, std::string name)
    : Layer(name.empty() ? (max ? "global_max_pooling2d" : "global_average_pooling2d") : std::move(name)), max_(max),
      keepdims_(keepdims) {}

void GlobalPooling2D::write_config(KerasConfigWriter& c) const {
  c.string("data_format", "channels_last");
  c.boolean("keepdims", keepdims_);
}

Shape GlobalPooling2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  if (keepdims_) return {1, 1, s[2]};
  return {s[2]};
}

axon_pool_attrs GlobalPooling2D::attrs() const {
  const Shape& s = input_shape();
  return ops::pool_attrs(static_cast<int>(s[0]), static_cast<int>(s[1]), 1, 1, AXON_PADDING_VALID);
}

Tensor GlobalPooling2D::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  Tensor y = take(n, output_shape());
  Tensor pooled = y.reshaped({n, 1, 1, input_shape()[2]});
  if (max_) ops::max_pool(x, pooled, attrs(), name());
  else ops::avg_pool(x, pooled, attrs(), name());
  if (max_ && remembers()) x_ = x, y_ = pooled;
  return y;
}

void GlobalPooling2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    const int64_t n = dy.dim(0);
    const Tensor d = dy.reshaped({n, 1, 1, input_shape()[2]});
    dx[0] = take(n, input_shape());
    if (max_) ops::max_pool_grad(x_, y_, d, dx[0], attrs(), name());
    else ops::avg_pool_grad(d, dx[0], attrs(), name());
  }
  x_ = y_ = Tensor();
}

namespace {
template <bool Max>
std::unique_ptr<Layer> global_pooling2d_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<GlobalPooling2D>(Max, l.boolean("keepdims", false), l.name());
}
const LayerEntry kGlobalAverageEntry{"GlobalAveragePooling2D", global_pooling2d_from_keras<false>, "keepdims"};
const LayerEntry kGlobalMaxEntry{"GlobalMaxPooling2D", global_pooling2d_from_keras<true>, "keepdims"};
const LayerRegistration kRegisteredAverage(kGlobalAverageEntry);
const LayerRegistration kRegisteredMax(kGlobalMaxEntry);
}  // namespace
}  // namespace axon::nn
