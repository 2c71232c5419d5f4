// The Keras layers the trainer's model uses. Images are NHWC, conv kernels
// HWIO, dense kernels [in, out]: the layouts Keras uses, so weights carry over.
#pragma once

#include <axon/nn/layer.hpp>
#include <axon/plugin_abi.h>

namespace axon::nn {

class MaxPooling2D;

// Conv2D(filters, kernel_size, activation): y = act(conv(x, kernel) + bias),
// kernel glorot_uniform, bias zeros. Stride 1 and "valid" padding by default;
// without use_bias there is no bias (and no fused op, which adds one).
class Conv2D : public Layer {
 public:
  Conv2D(int filters, int kernel_size, Activation activation = Activation::linear, int stride = 1,
         axon_padding padding = AXON_PADDING_VALID, std::string name = "conv2d", bool use_bias = true);
  const char* type() const override { return "Conv2D"; }
  std::unique_ptr<Layer> clone() const override;
  std::vector<Parameter*> parameters() override;
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  Activation activation() const { return activation_; }
  int filters() const { return filters_; }
  int kernel_size() const { return kernel_size_; }
  int stride() const { return attrs_.stride_h; }
  axon_padding padding() const { return attrs_.padding; }
  bool use_bias() const { return use_bias_; }

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
  bool use_bias_;
  Parameter kernel_, bias_;
  Device* pooled_on_ = nullptr;  // where the last forward_pooled ran
};

// MaxPooling2D(pool_size, strides, padding): stride = pool_size and "valid"
// padding by default (stride 0: the pool size).
class MaxPooling2D : public Layer {
 public:
  explicit MaxPooling2D(int pool_size = 2, std::string name = "max_pooling2d", int stride = 0,
                        axon_padding padding = AXON_PADDING_VALID);
  const char* type() const override { return "MaxPooling2D"; }
  std::unique_ptr<Layer> clone() const override;
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  const axon_pool_attrs& attrs() const { return attrs_; }
  int pool_size() const { return pool_size_; }

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
  int units() const { return units_; }
  const char* type() const override { return "Dense"; }
  std::unique_ptr<Layer> clone() const override;
  std::vector<Parameter*> parameters() override { return {&kernel_, &bias_}; }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  Activation activation() const { return softmax_ ? Activation::softmax : activation_; }

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  int units_;
  Activation activation_;  // what forward applies: linear or relu
  bool softmax_ = false;   // activation softmax: linear here, the loss's softmax after
  Parameter kernel_, bias_;
};

// Dropout(rate): while training, zeroes each value with probability `rate`
// and scales the others by 1 / (1 - rate) (Keras' inverted dropout); at
// inference the identity. The mask is drawn on the host from a SplitMix64
// stream seeded when the layer is built (from the model's seed), one draw
// per value per step, and applied on the device with ReluGrad (dy where the
// mask is > 0, else 0) after a Scale: existing ops, so every plugin runs it.
class Dropout : public Layer {
 public:
  explicit Dropout(float rate, std::string name = "dropout");
  const char* type() const override { return "Dropout"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Dropout>(rate_, name()); }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;
  float rate() const { return rate_; }

 protected:
  Shape do_build(const Shape& input_shape, Device& device, Rng& rng) override;

 private:
  float rate_;
  Rng masks_{0};
  std::vector<float> host_mask_;
  int64_t mask_batch_ = -1;  // the batch size of the mask the last training forward used
  bool dropped_ = false;     // whether the last forward applied a mask
};

// ReLU as a layer of its own: y = max(x, 0).
class ReLU : public Layer {
 public:
  explicit ReLU(std::string name = "re_lu") : Layer(std::move(name)) {}
  const char* type() const override { return "ReLU"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<ReLU>(name()); }
  const Tensor& forward(const Tensor& x) override;
  const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) override;

 protected:
  Shape do_build(const Shape& input_shape, Device&, Rng&) override { return input_shape; }
};

}  // namespace axon::nn
