// Conv2D forward: Conv2D, BiasAdd (in place), Relu. Backward: ReluGrad,
// BiasAddGrad, Conv2DBackpropFilter and, unless it is the first layer,
// Conv2DBackpropInput. Where the device has them, _FusedConv2D replaces the
// first three and _FusedReluGradBiasAddGrad the next two (one pass each over
// the activations instead of three / two); followed by MaxPooling2D, the
// layer and the pool run as _FusedConv2DMaxPool / _FusedConv2DMaxPoolGrad.
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
enum Slot { kZ, kY, kDz, kDx, kPooled, kArgmax };

int64_t conv_out(int64_t in, int k, int stride, axon_padding p) {
  return p == AXON_PADDING_SAME ? (in + stride - 1) / stride : (in - k) / stride + 1;
}
}  // namespace

Conv2D::Conv2D(int filters, int kernel_size, Activation activation, int stride, axon_padding padding, std::string name,
               bool use_bias)
    : Layer(std::move(name)), filters_(filters), kernel_size_(kernel_size), activation_(activation),
      attrs_(ops::conv2d_attrs(stride, padding)), use_bias_(use_bias) {
  if (filters <= 0 || kernel_size <= 0 || stride <= 0)
    throw UsageError("Conv2D: filters, kernel size and stride must be positive");
  if (activation == Activation::softmax) throw UsageError("Conv2D: activation softmax is not supported");
}

std::unique_ptr<Layer> Conv2D::clone() const {
  return std::make_unique<Conv2D>(filters_, kernel_size_, activation_, attrs_.stride_h, attrs_.padding, name(),
                                  use_bias_);
}

std::vector<Parameter*> Conv2D::parameters() {
  if (!use_bias_) return {&kernel_};
  return {&kernel_, &bias_};
}

Shape Conv2D::do_build(const Shape& in, Device& device, Rng& rng) {
  if (in.size() != 3)
    throw UsageError("Conv2D " + name() + " needs a [height, width, channels] input, got " + shape_string(in));
  if (attrs_.padding == AXON_PADDING_VALID && (in[0] < kernel_size_ || in[1] < kernel_size_))
    throw UsageError("Conv2D " + name() + ": input " + shape_string(in) + " is smaller than the kernel");
  const int64_t oh = conv_out(in[0], kernel_size_, attrs_.stride_h, attrs_.padding);
  const int64_t ow = conv_out(in[1], kernel_size_, attrs_.stride_w, attrs_.padding);
  if (oh <= 0 || ow <= 0)
    throw UsageError("Conv2D " + name() + ": input " + shape_string(in) + " is smaller than the kernel");
  Shape kshape{kernel_size_, kernel_size_, in[2], filters_};
  kernel_ = {name() + "/kernel", make_tensor(device, kshape, glorot_uniform(kshape, rng)), Tensor(device, AXON_FLOAT32, kshape)};
  if (use_bias_) bias_ = {name() + "/bias", zeros(device, {filters_}), Tensor(device, AXON_FLOAT32, {filters_})};
  return {oh, ow, filters_};
}

const Tensor& Conv2D::forward(const Tensor& x) {
  const int64_t n = x.dim(0);
  const bool relu = activation_ == Activation::relu;
  Device* d = use_bias_ ? fused_device(OpId::FusedConv2D, OpId::Conv2D, x) : nullptr;
  if (d != nullptr) {
    DeviceScope scope(*d);
    Tensor& y = buffer(relu ? kY : kZ, n, output_shape());
    ops::fused_conv2d(x, kernel_.value, bias_.value, y, attrs_, relu, name());
    return y;
  }
  Tensor& z = buffer(kZ, n, output_shape());
  ops::conv2d(x, kernel_.value, z, attrs_, name());
  if (use_bias_) ops::bias_add(z, bias_.value, z, name());
  if (activation_ == Activation::linear) return z;
  Tensor& y = buffer(kY, n, output_shape());
  ops::relu(z, y, name());
  return y;
}

const Tensor& Conv2D::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  const int64_t n = x.dim(0);
  const Tensor* dz = &dy;
  if (activation_ == Activation::relu) {
    Tensor& g = buffer(kDz, n, output_shape());
    const Tensor& y = buffer(kY, n, output_shape());
    Device* d = use_bias_ ? fused_device(OpId::FusedReluGradBiasAddGrad, OpId::ReluGrad, dy) : nullptr;
    if (d != nullptr) {
      DeviceScope scope(*d);
      ops::relu_grad_bias_add_grad(dy, y, g, bias_.grad, name());
    } else {
      ops::relu_grad(dy, y, g, name());
      if (use_bias_) ops::bias_add_grad(g, bias_.grad, name());
    }
    dz = &g;
  } else if (use_bias_) {
    ops::bias_add_grad(*dz, bias_.grad, name());
  }
  ops::conv2d_backprop_filter(x, *dz, kernel_.grad, attrs_, name());
  if (!need_dx) return none();
  Tensor& dx = buffer(kDx, n, input_shape());
  ops::conv2d_backprop_input(*dz, kernel_.value, dx, attrs_, name());
  return dx;
}

const Tensor* Conv2D::forward_pooled(const Tensor& x, const MaxPooling2D& pool) {
  if (!pool.fused_ops() || !use_bias_) return nullptr;
  Device* d = fused_device(OpId::FusedConv2DMaxPool, OpId::Conv2D, x);
  if (d == nullptr || !d->has_kernel(OpId::FusedConv2DMaxPoolGrad, x.dtype())) return nullptr;
  DeviceScope scope(*d);
  pooled_on_ = d;
  const int64_t n = x.dim(0);
  Tensor& y = buffer(kPooled, n, pool.output_shape());
  Tensor& argmax = buffer(kArgmax, n, pool.output_shape(), AXON_UINT8);
  ops::fused_conv2d_max_pool(x, kernel_.value, bias_.value, y, argmax, attrs_, activation_ == Activation::relu,
                             pool.attrs(), name());
  return &y;
}

const Tensor& Conv2D::backward_pooled(const Tensor& x, const Tensor& dy, const MaxPooling2D& pool, bool need_dx) {
  if (pooled_on_ == nullptr) throw RuntimeError("Conv2D " + name() + ": backward_pooled without forward_pooled");
  note_fused_path(OpId::FusedConv2DMaxPoolGrad, *pooled_on_, name(), x.dtype());
  DeviceScope scope(*pooled_on_);
  const int64_t n = x.dim(0);
  const Tensor& argmax = buffer(kArgmax, n, pool.output_shape(), AXON_UINT8);
  Tensor* dx = need_dx ? &buffer(kDx, n, input_shape()) : nullptr;
  ops::fused_conv2d_max_pool_grad(x, kernel_.value, dy, argmax, kernel_.grad, bias_.grad, dx, attrs_,
                                  activation_ == Activation::relu, pool.attrs(), name());
  return need_dx ? *dx : none();
}

int64_t Conv2D::forward_flops() const {
  const Shape& o = output_shape();
  return 2 * o[0] * o[1] * o[2] * kernel_size_ * kernel_size_ * input_shape()[2];
}

int64_t Conv2D::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

}  // namespace axon::nn
