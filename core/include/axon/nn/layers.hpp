// The Keras layers axon trains, for building models in C++ (a Keras model
// JSON builds the same classes through the layer registry). Images are NHWC,
// convolution kernels HWIO, dense kernels [in, out]: the layouts Keras uses,
// so weights carry over. Each class is implemented, with its Keras config and
// its registration, in its own file under core/src/nn/layers/.
#pragma once

#include <axon/nn/activation.hpp>
#include <axon/nn/layer.hpp>
#include <axon/plugin_abi.h>

#include <optional>

namespace axon::nn {

// A height and width (kernel, pool, stride, dilation); an int means both.
struct Size2 {
  int h = 1, w = 1;
  Size2(int both) : h(both), w(both) {}  // NOLINT: implicit on purpose, as Keras' int arguments
  Size2(int height, int width) : h(height), w(width) {}
  bool operator==(const Size2&) const = default;
};

// Conv2D(filters, kernel_size, activation, strides, padding, name, use_bias,
// dilation_rate): y = act(conv(x, kernel) + bias), kernel glorot_uniform,
// bias zeros. Where the device has them, _FusedConv2D runs the convolution,
// bias and relu as one op, and a following MaxPooling2D may fuse with it
// (the fusion pass, fusion.cpp).
class Conv2D : public Layer {
 public:
  Conv2D(int filters, Size2 kernel_size, Activation activation = Activation::linear, Size2 strides = 1,
         axon_padding padding = AXON_PADDING_VALID, std::string name = "conv2d", bool use_bias = true,
         Size2 dilation_rate = 1);
  const char* type() const override { return "Conv2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<WeightSpec> weight_specs(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  bool ends_in_softmax() const override { return activation_ == Activation::softmax; }
  void set_output_logits(bool logits) override { logits_ = logits; }

  Activation activation() const { return activation_; }
  int filters() const { return filters_; }
  Size2 kernel_size() const { return kernel_; }
  const axon_conv2d_attrs& attrs() const { return attrs_; }
  bool use_bias() const { return use_bias_; }
  // The activation forward applies (linear when the model reads the logits).
  Activation applied() const { return logits_ ? Activation::linear : activation_; }

 private:
  int filters_;
  Size2 kernel_;
  Activation activation_;
  axon_conv2d_attrs attrs_;
  bool use_bias_;
  bool logits_ = false;
  Tensor x_, z_, y_;  // kept for the backward
};

// MaxPooling2D(pool_size, strides, padding, name): strides default to the
// pool size, padding to "valid".
class MaxPooling2D : public Layer {
 public:
  explicit MaxPooling2D(Size2 pool_size = 2, std::optional<Size2> strides = std::nullopt,
                        axon_padding padding = AXON_PADDING_VALID, std::string name = "max_pooling2d");
  const char* type() const override { return "MaxPooling2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  const axon_pool_attrs& attrs() const { return attrs_; }

 private:
  axon_pool_attrs attrs_;
  Tensor x_, y_;
};

// Flatten: [N, ...] -> [N, prod(...)], a view of the same buffer (NHWC
// order, as Keras' channels_last Flatten).
class Flatten : public Layer {
 public:
  explicit Flatten(std::string name = "flatten") : Layer(std::move(name)) {}
  const char* type() const override { return "Flatten"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Flatten>(name()); }
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
};

// Dense(units, activation, name, use_bias): y = act(x @ kernel + bias), x
// [N, in], kernel [in, units] glorot_uniform, bias zeros. Where the device
// has it, _FusedMatMul runs the product, bias and relu as one op.
class Dense : public Layer {
 public:
  explicit Dense(int units, Activation activation = Activation::linear, std::string name = "dense",
                 bool use_bias = true);
  const char* type() const override { return "Dense"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<WeightSpec> weight_specs(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  bool ends_in_softmax() const override { return activation_ == Activation::softmax; }
  void set_output_logits(bool logits) override { logits_ = logits; }

  int units() const { return units_; }
  Activation activation() const { return activation_; }
  Activation applied() const { return logits_ ? Activation::linear : activation_; }

 private:
  int units_;
  Activation activation_;
  bool use_bias_;
  bool logits_ = false;
  Tensor x_, z_, y_;
};

// Dropout(rate): while training, zeroes each value with probability `rate`
// and scales the others by 1 / (1 - rate) (Keras' inverted dropout); at
// inference the identity. The mask is drawn on the host from a SplitMix64
// stream seeded when the layer is built (from the model's seed), one draw
// per value per step, and applied on the device with ReluGrad (dy where the
// mask is > 0, else 0) after a Scale: existing ops, so every plugin runs it.
// SpatialDropout2D drops whole channels: one draw per (sample, channel).
class Dropout : public Layer {
 public:
  explicit Dropout(float rate, std::string name = "dropout", bool spatial = false);
  const char* type() const override { return spatial_ ? "SpatialDropout2D" : "Dropout"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  float rate() const { return rate_; }

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  float rate_;
  bool spatial_;
  Rng masks_{0};
  std::vector<float> host_mask_;
  Tensor mask_;  // the last training forward's mask (empty: nothing dropped)
};

// ReLU(max_value, negative_slope, threshold), Keras' layer: plain Relu when
// all three are at their defaults, Relu6 for max_value 6, LeakyRelu for a
// slope alone, else ClippedRelu. LeakyReLU(negative_slope) is the same layer
// under its own Keras name.
class ReLU : public Layer {
 public:
  explicit ReLU(std::string name = "re_lu", std::optional<float> max_value = std::nullopt,
                float negative_slope = 0.0f, float threshold = 0.0f, bool leaky_layer = false);
  const char* type() const override { return leaky_layer_ ? "LeakyReLU" : "ReLU"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  enum class Form { relu, relu6, leaky, clipped };
  std::optional<float> max_value_;
  float negative_slope_, threshold_;
  bool leaky_layer_;
  Form form_;
  Tensor x_, y_;
};

// Add, Subtract, Multiply, Average, Maximum: elementwise over inputs of one
// shape (Subtract: exactly two).
class Merge : public Layer {
 public:
  enum class Kind { add, subtract, multiply, average, maximum };
  Merge(Kind kind, std::string name);
  const char* type() const override;
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Merge>(kind_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  int min_inputs() const override { return 2; }
  int max_inputs() const override { return kind_ == Kind::subtract ? 2 : 64; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
  std::vector<Tensor> x_;        // Multiply and Maximum: the inputs
  std::vector<Tensor> partial_;  // Multiply and Maximum: the running results
};

}  // namespace axon::nn
