#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
enum Slot { kY, kDx };
}

MaxPooling2D::MaxPooling2D(int pool_size, std::string name, int stride, axon_padding padding)
    : Layer(std::move(name)), pool_size_(pool_size),
      attrs_(ops::pool_attrs(pool_size, stride == 0 ? pool_size : stride, padding)) {
  if (pool_size <= 0 || stride < 0) throw UsageError("MaxPooling2D: pool size and stride must be positive");
}

std::unique_ptr<Layer> MaxPooling2D::clone() const {
  return std::make_unique<MaxPooling2D>(pool_size_, name(), attrs_.stride_h, attrs_.padding);
}

Shape MaxPooling2D::do_build(const Shape& in, Device&, Rng&) {
  if (in.size() != 3)
    throw UsageError("MaxPooling2D " + name() + " needs a [height, width, channels] input, got " + shape_string(in));
  // TensorFlow's sizes: "valid" drops the ragged edge, "same" pads to cover it.
  const int64_t s = attrs_.stride_h;
  if (attrs_.padding == AXON_PADDING_VALID && (in[0] < pool_size_ || in[1] < pool_size_))
    throw UsageError("MaxPooling2D " + name() + ": input " + shape_string(in) + " is smaller than the pool");
  const int64_t oh = attrs_.padding == AXON_PADDING_SAME ? (in[0] + s - 1) / s : (in[0] - pool_size_) / s + 1;
  const int64_t ow = attrs_.padding == AXON_PADDING_SAME ? (in[1] + s - 1) / s : (in[1] - pool_size_) / s + 1;
  if (oh <= 0 || ow <= 0)
    throw UsageError("MaxPooling2D " + name() + ": input " + shape_string(in) + " is smaller than the pool");
  return {oh, ow, in[2]};
}

const Tensor& MaxPooling2D::forward(const Tensor& x) {
  Tensor& y = buffer(kY, x.dim(0), output_shape());
  ops::max_pool(x, y, attrs_, name());
  return y;
}

const Tensor& MaxPooling2D::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  if (!need_dx) return none();
  const int64_t n = x.dim(0);
  Tensor& dx = buffer(kDx, n, input_shape());
  ops::max_pool_grad(x, buffer(kY, n, output_shape()), dy, dx, attrs_, name());
  return dx;
}

}  // namespace axon::nn
