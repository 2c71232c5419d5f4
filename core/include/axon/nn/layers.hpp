// The Keras layers the trainer's model uses. Images are NHWC, conv kernels
// HWIO, dense kernels [in, out]: the layouts Keras uses, so weights carry over.
#pragma once

#include <axon/nn/layer.hpp>
#include <axon/plugin_abi.h>

namespace axon::nn {

class MaxPooling2D;

// Conv2D(filters, kernel_size, activation): y = act(conv(x, kernel) + bias),
// kernel glorot_uniform, bias zeros. Stride 1 and "valid" padding by default.
class Conv2D : public Layer {
 public:
  Conv2D(int filters, int kernel_size, Activation activation = Activation::linear, int stride = 1,
         axon_padding padding = AXON_PADDING_VALID, std::string name = "conv2d");
  const char* type() const override { return "Conv2D"; }
  std::unique_ptr<Layer> clone() const override;
  std::vector<Parameter*> parameters() override { return {&kernel_, &bias_}; }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  Activation activation() const { return activation_; }

  // This layer and the MaxPooling2D after it as one op pair
  // (_FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad) where the device the
  // convolution goes to has both and both layers allow fused ops: the layer's
  // full-size output never exists, only the pooled one and a byte of argmax
  // per pooled value. Returns the pool's output, or nullptr when the two
  // layers must run apart. Sequential calls it for each such pair.
  const Tensor* forward_pooled(const Tensor& x, const MaxPooling2D& pool);
  // After forward_pooled returned a tensor: dy is the gradient of the pool's
  // output; returns dLoss/dx when need_dx.
  const Tensor& backward_pooled(const Tensor& x, const Tensor& dy, const MaxPooling2D& pool, bool need_dx);

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  int filters_, kernel_size_;
  Activation activation_;
  axon_conv2d_attrs attrs_;
  Parameter kernel_, bias_;
  Device* pooled_on_ = nullptr;  // where the last forward_pooled ran
};

// MaxPooling2D(pool_size): window = stride = pool_size, "valid" padding.
class MaxPooling2D : public Layer {
 public:
  explicit MaxPooling2D(int pool_size = 2, std::string name = "max_pooling2d");
  const char* type() const override { return "MaxPooling2D"; }
  std::unique_ptr<Layer> clone() const override;
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  const axon_pool_attrs& attrs() const { return attrs_; }

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  int pool_size_;
  axon_pool_attrs attrs_;
};

// Flatten: [N, ...] -> [N, prod(...)], a view of the same buffer (NHWC order,
// as Keras' channels_last Flatten).
class Flatten : public Layer {
 public:
  explicit Flatten(std::string name = "flatten") : Layer(std::move(name)) {}
  const char* type() const override { return "Flatten"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Flatten>(name()); }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  Tensor y_view_, dx_view_;
};

// Dense(units, activation): y = act(x @ kernel + bias), x [N, in], kernel
// [in, units] glorot_uniform, bias zeros.
class Dense : public Layer {
 public:
  explicit Dense(int units, Activation activation = Activation::linear, std::string name = "dense");
  const char* type() const override { return "Dense"; }
  std::unique_ptr<Layer> clone() const override;
  std::vector<Parameter*> parameters() override { return {&kernel_, &bias_}; }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  Activation activation() const { return activation_; }

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  int units_;
  Activation activation_;
  Parameter kernel_, bias_;
};

}  // namespace axon::nn
