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
// dilation_rate, groups): y = act(conv(x, kernel) + bias), kernel
// glorot_uniform, bias zeros. Where the device has them, _FusedConv2D runs
// the convolution, bias and relu as one op, and a following MaxPooling2D may
// fuse with it (the fusion pass, fusion.cpp). groups: 1, or the input's
// channels (each channel convolved with its own filters / channels filters:
// ConvNeXt's "depthwise" Conv2D), which runs as DepthwiseConv2dNative, its
// kernel [KH, KW, 1, filters] holding the depthwise filter's bytes.
class Conv2D : public Layer {
 public:
  Conv2D(int filters, Size2 kernel_size, Activation activation = Activation::linear, Size2 strides = 1,
         axon_padding padding = AXON_PADDING_VALID, std::string name = "conv2d", bool use_bias = true,
         Size2 dilation_rate = 1, int groups = 1);
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
  // Where the device has _Conv2DBackpropInputAccumulate.
  bool adds_into_dx() const override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;
  Activation output_activation() const override { return activation_; }
  void set_output_logits(bool logits) override { logits_ = logits; }

  Activation activation() const { return activation_; }
  int filters() const { return filters_; }
  Size2 kernel_size() const { return kernel_; }
  const axon_conv2d_attrs& attrs() const { return attrs_; }
  bool use_bias() const { return use_bias_; }
  int groups() const { return groups_; }
  // The activation forward applies (linear when the model reads the logits).
  Activation applied() const { return logits_ ? Activation::linear : activation_; }

 private:
  // groups = the input's channels: a depthwise convolution.
  bool by_channel() const { return groups_ > 1 && groups_ == input_shape()[2]; }
  // The kernel as DepthwiseConv2dNative's [KH, KW, C, filters / C] filter (by_channel()).
  Tensor depthwise(const Tensor& kernel) const;
  // Each group's Conv2D joined by ConcatV2 (1 < groups < channels), and its gradients.
  void grouped_conv2d(const Tensor& x, const Tensor& kernel, Tensor& z) const;
  void grouped_conv2d_grad(const Tensor& x, const Tensor& dz, const Tensor& kernel, Tensor& dkernel, Tensor* dx) const;

  int filters_;
  Size2 kernel_;
  Activation activation_;
  axon_conv2d_attrs attrs_;
  bool use_bias_;
  int groups_;
  bool logits_ = false;
  Kept kept_;  // for the backward
};

// Conv2DTranspose(filters, kernel_size, strides, padding, activation,
// use_bias): the gradient of a convolution with respect to its
// input, run forward (Conv2DBackpropInput; its kernel [KH, KW, filters,
// channels] is that convolution's filter). Backward: Conv2D for the input's
// gradient, Conv2DBackpropFilter with the roles of input and gradient
// swapped for the kernel's. output_padding (each below its stride) picks
// the output size Keras gives it, where several map back to the input's.
class Conv2DTranspose : public Layer {
 public:
  Conv2DTranspose(int filters, Size2 kernel_size, Activation activation = Activation::linear, Size2 strides = 1,
                  axon_padding padding = AXON_PADDING_VALID, std::string name = "conv2d_transpose",
                  bool use_bias = true, std::optional<Size2> output_padding = std::nullopt);
  const char* type() const override { return "Conv2DTranspose"; }
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
  Activation output_activation() const override { return activation_; }
  void set_output_logits(bool logits) override { logits_ = logits; }

 private:
  Activation applied() const { return logits_ ? Activation::linear : activation_; }
  int filters_;
  Size2 kernel_;
  Activation activation_;
  axon_conv2d_attrs attrs_;
  bool use_bias_;
  std::optional<Size2> output_padding_;
  bool logits_ = false;
  Kept kept_;  // for the backward
};

// UpSampling2D(size, interpolation): each pixel repeated size.h x size.w
// times ("nearest"), or TensorFlow's bilinear resize by that factor
// (half-pixel centres, edges clamped). Nearest is the input gradient of a
// depthwise convolution of ones with the size as kernel and strides (each
// output pixel the sum of a block), so forward runs
// DepthwiseConv2dNativeBackpropInput and backward DepthwiseConv2dNative, ops
// every plugin has. Bilinear is the same transposed convolution with a tent
// of weights 1 - |d| / size around each input pixel, over the input with its
// edge pixels repeated once on every side (Slice, ConcatV2), cropped to the
// output (Slice); backward runs the adjoints (Pad, the convolution, the
// repeated edges added back).
class UpSampling2D : public Layer {
 public:
  explicit UpSampling2D(Size2 size = 2, std::string name = "up_sampling2d", bool bilinear = false);
  const char* type() const override { return "UpSampling2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  // x with its first and last rows (axis 1) or columns (axis 2) repeated
  // once, and the adjoint: the inner ones of dy, the repeated ones added
  // back into the edges.
  Tensor repeat_edges(const Tensor& x, int axis) const;
  Tensor add_back_edges(const Tensor& dy, int axis) const;

  Size2 size_;
  bool bilinear_;
  axon_conv2d_attrs attrs_;
  Tensor kernel_;  // [kh, kw, channels, 1]: ones of the size, or the tent
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

// Identity: the input as it is (Keras' placeholder layer; ConvNeXt's drop
// path at rate 0).
class Identity : public Layer {
 public:
  explicit Identity(std::string name = "identity") : Layer(std::move(name)) {}
  const char* type() const override { return "Identity"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Identity>(name()); }
  void write_config(KerasConfigWriter&) const override {}
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override { return x[0]; }
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override {
    if (need_dx[0]) dx[0] = dy;
  }
};

// GaussianNoise(stddev) and GaussianDropout(rate): while training, x plus
// stddev times a standard normal, or x times a normal of mean 1 and standard
// deviation sqrt(rate / (1 - rate)); the identity in inference. The normals
// are drawn on the device (StatelessRandomNormalV2), keyed per step from a
// stream seeded when the layer is built (from the model's seed).
class GaussianNoise : public Layer {
 public:
  enum class Kind { additive, multiplicative };
  GaussianNoise(Kind kind, float amount, std::string name = "gaussian_noise");
  const char* type() const override { return kind_ == Kind::additive ? "GaussianNoise" : "GaussianDropout"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<GaussianNoise>(kind_, amount_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  Kind kind_;
  float amount_;  // stddev, or rate
  Rng keys_{0};
  Tensor factors_;  // the last training forward's multiplicative noise
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
  Activation output_activation() const override { return activation_; }
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
// Keras' noise_shape (per sample: 1 where one draw covers the axis, the
// axis' size or -1 (None) where each index draws its own) generalizes it:
// EfficientNet's [None, 1, 1, 1] drops whole samples of a residual branch.
class Dropout : public Layer {
 public:
  explicit Dropout(float rate, std::string name = "dropout", bool spatial = false, Shape noise_shape = {});
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
  void set_noise_shape(Shape noise_shape) { noise_shape_ = std::move(noise_shape); }

 private:
  float rate_;
  bool spatial_;
  Shape noise_shape_;  // per sample; empty: a draw per value
  Rng masks_{0};
  std::vector<float> draws_;
  std::vector<float> host_mask_;
  Tensor mask_;  // the last training forward's mask (empty: nothing dropped)
};

// StochasticDepth(drop_path_rate): ConvNeXt's own layer (Keras'
// keras.src.applications.convnext), which drops a whole sample's residual
// branch while training: Dropout with one draw a sample (a noise_shape of
// 1 on every axis), the kept samples scaled by 1 / (1 - rate); the
// identity otherwise.
class StochasticDepth : public Dropout {
 public:
  explicit StochasticDepth(double drop_path_rate, std::string name = "stochastic_depth");
  const char* type() const override { return "StochasticDepth"; }
  const char* keras_module() const override { return "keras.src.applications.convnext"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  double drop_path_rate_;  // as the config has it (written back so)
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
  // max(x, 0) itself (no max_value, slope or threshold): what fused ops apply.
  bool plain() const { return form_ == Form::relu; }

 private:
  enum class Form { relu, relu6, leaky, clipped };
  std::optional<float> max_value_;
  float negative_slope_, threshold_;
  bool leaky_layer_;
  Form form_;
  Tensor x_, y_;
};

// Add, Subtract, Multiply, Average, Maximum: elementwise over inputs whose
// shapes Keras broadcasts together (Subtract: exactly two).
class Merge : public Layer {
 public:
  enum class Kind { add, subtract, multiply, average, maximum, minimum };
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
  // Whether an input's shape differs from the output's (once built).
  bool broadcasts() const;

 private:
  // x repeated to the output's shape; the output-shaped gradient g summed
  // back to input i's shape.
  Tensor broadcast(const Tensor& x) const;
  Tensor sum_to_input(const Tensor& g, size_t i) const;

  Kind kind_;
  std::vector<Tensor> x_;        // Multiply, Maximum, Minimum: the inputs (at the output's shape; negated for Minimum)
  std::vector<Tensor> partial_;  // Multiply, Maximum, Minimum: the running results (negated for Minimum)
};

// Activation(name) and Softmax(axis -1): the activation as a layer of its
// own. As the model's output, softmax gives the logits to the loss. gelu's
// tanh approximation, which no Keras activation name gives, is the
// keras.ops call Keras writes for it (Gelu of keras.src.ops.nn).
class ActivationLayer : public Layer {
 public:
  ActivationLayer(Activation activation, std::string name = "activation", bool softmax_layer = false);
  const char* type() const override {
    return softmax_layer_ ? "Softmax" : activation_ == Activation::gelu_tanh ? "Gelu" : "Activation";
  }
  const char* keras_module() const override {
    return activation_ == Activation::gelu_tanh ? "keras.src.ops.nn" : "keras.layers";
  }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  Activation output_activation() const override { return activation_; }
  void set_output_logits(bool logits) override { logits_ = logits; }
  Activation activation() const { return activation_; }

 private:
  Activation activation_;
  bool softmax_layer_;
  bool logits_ = false;
  Tensor x_, y_;
};

// Reshape(target_shape): a view; one dimension may be -1 (inferred).
class Reshape : public Layer {
 public:
  explicit Reshape(Shape target_shape, std::string name = "reshape");
  const char* type() const override { return "Reshape"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Reshape>(target_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  Shape target_;
};

// Rescaling(scale, offset): y = x * scale + offset.
class Rescaling : public Layer {
 public:
  Rescaling(float scale, float offset = 0.0f, std::string name = "rescaling");
  const char* type() const override { return "Rescaling"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Rescaling>(scale_, offset_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override { return inputs[0]; }
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  bool scales_pixels() const override { return true; }

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  float scale_, offset_;
  Tensor offsets_;  // [channels] of offset, for BiasAdd
};

// AveragePooling2D(pool_size, strides, padding): TensorFlow's AvgPool (SAME
// averages over the taps inside the image).
class AveragePooling2D : public Layer {
 public:
  explicit AveragePooling2D(Size2 pool_size = 2, std::optional<Size2> strides = std::nullopt,
                            axon_padding padding = AXON_PADDING_VALID, std::string name = "average_pooling2d");
  const char* type() const override { return "AveragePooling2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  axon_pool_attrs attrs_;
};

// GlobalAveragePooling2D and GlobalMaxPooling2D: the mean or maximum of each
// channel over the image ([H, W, C] -> [C], or [1, 1, C] with keepdims), as
// AvgPool / MaxPool with a window of the whole image.
class GlobalPooling2D : public Layer {
 public:
  GlobalPooling2D(bool max, bool keepdims = false, std::string name = "");
  const char* type() const override { return max_ ? "GlobalMaxPooling2D" : "GlobalAveragePooling2D"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<GlobalPooling2D>(max_, keepdims_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  axon_pool_attrs attrs() const;
  bool max_, keepdims_;
  Tensor x_, y_;  // GlobalMaxPooling2D: for MaxPoolGrad
};

// ZeroPadding2D(((top, bottom), (left, right))): Pad forward, Slice backward.
class ZeroPadding2D : public Layer {
 public:
  ZeroPadding2D(int top, int bottom, int left, int right, std::string name = "zero_padding2d");
  const char* type() const override { return "ZeroPadding2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  int top_, bottom_, left_, right_;
};

// Normalization(axis=-1, mean, variance): Keras' per-channel
// (x - mean) / max(sqrt(variance), 1e-7). The mean and variance are the
// config's numbers, or else the layer's non-trainable weights mean,
// variance and count (what Keras' adapt() leaves; zeros, ones and 0 until
// loaded: EfficientNet's input layer). Empty `mean`: the weights.
class Normalization : public Layer {
 public:
  Normalization(std::vector<float> mean, std::vector<float> variance, std::string name = "normalization",
                int axis = -1);
  const char* type() const override { return "Normalization"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  std::vector<WeightSpec> weight_specs(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  const Tensor& mean() const { return mean_.empty() ? weight(0).value : mean_t_; }
  const Tensor& variance() const { return mean_.empty() ? weight(1).value : variance_t_; }
  std::vector<float> mean_, variance_;  // the config's, one per channel (or one for all)
  int axis_;                            // Keras' (counting the batch): -1 or the last
  Tensor mean_t_, variance_t_, ones_, zeros_, x_;
};

// Cropping2D(((top, bottom), (left, right))): Slice forward, Pad backward
// (ZeroPadding2D's ops the other way round).
class Cropping2D : public Layer {
 public:
  Cropping2D(int top, int bottom, int left, int right, std::string name = "cropping2d");
  const char* type() const override { return "Cropping2D"; }
  std::unique_ptr<Layer> clone() const override;
  void write_config(KerasConfigWriter& config) const override;
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  int top_, bottom_, left_, right_;
};

// Concatenate(axis): ConcatV2 forward, a Slice of dy per input backward.
class Concatenate : public Layer {
 public:
  explicit Concatenate(int axis = -1, std::string name = "concatenate");
  const char* type() const override { return "Concatenate"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<Concatenate>(axis_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  int min_inputs() const override { return 2; }
  int max_inputs() const override { return 64; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;

 private:
  // The axis in a per-sample shape of `rank` dimensions (0-based), or -1.
  int per_sample_axis(size_t rank) const;
  int axis_;
};

// BatchNormalization(momentum, epsilon, center, scale, synchronized), over
// the last axis, with Keras 3's numbers: training normalises with the batch's
// mean and biased variance and moves moving_mean and moving_variance towards
// them (x * momentum + batch * (1 - momentum)); inference uses the moving
// ones. Weights gamma, beta (trainable), moving_mean, moving_variance (not).
// Synchronized, the batch is the global batch over every replica: the
// statistics and the gradient's two sums are all-reduced mid-step (Keras 3's
// E[x^2] - E[x]^2 form), so a mirrored run normalises as one device would.
class BatchNormalization : public Layer {
 public:
  explicit BatchNormalization(double momentum = 0.99, double epsilon = 1e-3, bool center = true, bool scale = true,
                              std::string name = "batch_normalization", int axis = -1, bool synchronized = false);
  const char* type() const override { return "BatchNormalization"; }
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
  bool synchronizes() const override { return synchronized_; }
  void join_without_samples(bool forward) override;

  // For the fusion pass, which runs this layer and the ReLU after it as one
  // _FusedBatchNormEx: the weights (gamma and beta are constants where scale
  // or center is off), their gradients (undefined then) and the settings.
  const Tensor& gamma() const;
  const Tensor& beta() const;
  const Tensor& moving_mean() const;
  const Tensor& moving_variance() const;
  Tensor gamma_grad() { return scale_ ? weight(0).grad : Tensor(); }
  Tensor beta_grad() { return center_ ? weight(scale_ ? 1 : 0).grad : Tensor(); }
  double epsilon() const { return epsilon_; }
  // moving_mean and moving_variance towards the batch's mean and variance.
  void move_statistics(const Tensor& mean, const Tensor& variance);

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  Tensor forward_synchronized(const Tensor& x);
  // All-reduces [sum x, sum x^2], gives the global mean and variance and
  // moves the moving statistics by them.
  std::pair<Tensor, Tensor> global_statistics(Tensor& sums);
  void backward_synchronized(const Tensor& dy, Tensor& dx);
  // The values per channel over the global batch (synchronized).
  float global_count() const;

  double momentum_, epsilon_;
  bool center_, scale_;
  int axis_;  // Keras' (counting the batch): -1 or the last
  bool synchronized_;
  Tensor ones_, zeros_;  // gamma / beta when scale / center is off
  Tensor unit_row_;      // [1, C] of ones: its normalisation is rsqrt(variance + epsilon)
  Tensor batch_mean_, batch_variance_;    // outputs the layer does not read
  Tensor x_, mean_, variance_;            // kept for the backward
};

// LayerNormalization(axis, epsilon, center, scale): each sample normalised
// over its trailing axes (axes as Keras counts them, the batch 0: -1 or the
// per-sample rank for the last) by its own mean and variance (LayerNorm),
// then gamma and beta, which have those axes' shape.
class LayerNormalization : public Layer {
 public:
  explicit LayerNormalization(std::vector<int> axes = {-1}, double epsilon = 1e-3, bool center = true,
                              bool scale = true, std::string name = "layer_normalization");
  const char* type() const override { return "LayerNormalization"; }
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

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  // The first normalised axis of a per-sample shape; UsageError where the
  // axes are not a run of trailing ones.
  size_t first_axis(const Shape& in) const;
  Tensor gamma() const;  // [K]: the weight, or ones without scale
  Tensor beta() const;   // [K]: the weight, or zeros without center

  std::vector<int> axes_;
  double epsilon_;
  bool center_, scale_;
  int64_t k_ = 0;        // values per row: the normalised axes' product
  Tensor ones_, zeros_;  // gamma / beta when scale / center is off
  Tensor x_, mean_, inv_std_;  // kept for the backward
};

// GroupNormalization(groups, axis -1, epsilon, center, scale): each
// sample's channels in `groups` groups (-1: one a channel), each group's
// values normalised by their own mean and biased variance, then gamma and
// beta per channel. With the input viewed as [N, 1, values / C, C], each
// group's channels (Slice) are LayerNorm's rows, the results joined along
// the channels (ConcatV2); gamma a 1x1 depthwise convolution, beta a
// BiasAdd. Backward: BiasAddGrad, DepthwiseConv2dNativeBackpropFilter and
// the depthwise product for dy * gamma, LayerNormGrad per group, joined.
class GroupNormalization : public Layer {
 public:
  explicit GroupNormalization(int groups = 32, double epsilon = 1e-3, bool center = true, bool scale = true,
                              std::string name = "group_normalization");
  const char* type() const override { return "GroupNormalization"; }
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

 protected:
  void on_build(Device& device, Rng& rng) override;

 private:
  int64_t groups_of(const Shape& in) const;  // groups for this input (-1 resolved); UsageError where it cannot be
  Tensor as_image(const Tensor& t) const;     // [N, 1, values / C, C]
  // Per-group rows [N, values / groups] joined back along the channels.
  Tensor join(const std::vector<Tensor>& rows, const Tensor& like) const;

  int groups_;  // as configured (-1: one a channel)
  double epsilon_;
  bool center_, scale_;
  int64_t g_ = 0, k_ = 0;              // built: groups, values per group and sample
  Tensor ones_, zeros_;                // [k_]: LayerNorm's scale and offset
  // Kept for the backward: per group its input rows [N, k_] (sliced once),
  // mean and inverse deviation [N]; the normalised input (where scale).
  std::vector<Tensor> x_parts_, mean_, inv_std_;
  Tensor normalized_;
};

// PReLU(alpha_initializer, alpha_regularizer, shared_axes): Keras'
// relu(x) - alpha * relu(-x), alpha of the input's per-sample shape with
// the shared axes 1 (shared_axes [1, 2]: one alpha a channel). The axes
// alpha varies over must be a run of trailing axes (any of Keras' usual
// choices: none shared, or every axis but the last few), so that alpha is
// the 1x1 filter of a DepthwiseConv2dNative over the input viewed as
// [N, 1, repeats, alpha's values]: one product a value, Keras' bits.
class PReLU : public Layer {
 public:
  explicit PReLU(std::vector<int> shared_axes = {}, std::string name = "p_re_lu");
  const char* type() const override { return "PReLU"; }
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

 private:
  // alpha's shape for a per-sample input shape; UsageError where it cannot be.
  Shape alpha_shape(const Shape& in) const;
  // t [N, ...] as the depthwise op's image [N, 1, values / alpha's, alpha's].
  Tensor as_image(const Tensor& t) const;

  std::vector<int> shared_axes_;
  Tensor positive_, negative_;  // relu(x), relu(-x): kept for the backward
};

// CustomScaleLayer(scale): Inception-ResNet-v2's own layer (Keras'
// keras.src.applications.inception_resnet_v2), y = x + r * scale for its
// inputs [x, r] of one shape: a Scale of r (the float32 of scale), then
// AddN, Keras' two roundings; backward dy to x, dy * scale to r.
class CustomScaleLayer : public Layer {
 public:
  explicit CustomScaleLayer(double scale, std::string name = "custom_scale_layer");
  const char* type() const override { return "CustomScaleLayer"; }
  const char* keras_module() const override { return "keras.src.applications.inception_resnet_v2"; }
  std::unique_ptr<Layer> clone() const override { return std::make_unique<CustomScaleLayer>(scale_, name()); }
  void write_config(KerasConfigWriter& config) const override;
  int min_inputs() const override { return 2; }
  int max_inputs() const override { return 2; }
  Shape output_shape(std::span<const Shape> inputs) const override;
  using Layer::backward;
  using Layer::forward;
  using Layer::output_shape;
  Tensor forward(std::span<const Tensor> x) override;
  void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) override;
  int64_t forward_flops() const override;
  int64_t backward_flops(bool need_dx) const override;

 private:
  double scale_;  // as the config has it (written back so); the ops take its float
};

// LayerScale(init_values, projection_dim): ConvNeXt's own layer (Keras'
// keras.src.applications.convnext), y = x * gamma over the last axis, gamma
// [projection_dim] starting at init_values. Runs as a 1x1
// DepthwiseConv2dNative (one product per value: Keras' bits) and its
// gradients, so every plugin has it.
class LayerScale : public Layer {
 public:
  LayerScale(double init_values, int projection_dim, std::string name = "layer_scale");
  const char* type() const override { return "LayerScale"; }
  const char* keras_module() const override { return "keras.src.applications.convnext"; }
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

 private:
  // x [N, ...] as the depthwise op's [N, 1, values / C, C] image.
  Tensor as_image(const Tensor& t) const;

  double init_values_;
  int projection_dim_;
  Tensor x_;  // kept for the backward
};

// DepthwiseConv2D(kernel_size, strides, padding, depth_multiplier,
// dilation_rate, activation, use_bias): each input channel convolved with
// its own depth_multiplier filters (TensorFlow's DepthwiseConv2dNative),
// then bias and activation.
class DepthwiseConv2D : public Layer {
 public:
  DepthwiseConv2D(Size2 kernel_size, Size2 strides = 1, axon_padding padding = AXON_PADDING_VALID,
                  int depth_multiplier = 1, Size2 dilation_rate = 1, Activation activation = Activation::linear,
                  bool use_bias = true, std::string name = "depthwise_conv2d");
  const char* type() const override { return "DepthwiseConv2D"; }
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
  Activation output_activation() const override { return activation_; }
  void set_output_logits(bool logits) override { logits_ = logits; }

 private:
  Activation applied() const { return logits_ ? Activation::linear : activation_; }
  Size2 kernel_;
  axon_conv2d_attrs attrs_;
  int multiplier_;
  Activation activation_;
  bool use_bias_;
  bool logits_ = false;
  Kept kept_;  // for the backward
};

// SeparableConv2D(filters, kernel_size, strides, padding, depth_multiplier,
// dilation_rate, activation, use_bias): a depthwise convolution, then a 1x1
// convolution into `filters` channels, the bias and the activation (Keras
// 3's weights: depthwise_kernel [kh, kw, C, multiplier], pointwise_kernel
// [1, 1, C * multiplier, filters], bias).
class SeparableConv2D : public Layer {
 public:
  SeparableConv2D(int filters, Size2 kernel_size, Size2 strides = 1, axon_padding padding = AXON_PADDING_VALID,
                  int depth_multiplier = 1, Size2 dilation_rate = 1, Activation activation = Activation::linear,
                  bool use_bias = true, std::string name = "separable_conv2d");
  const char* type() const override { return "SeparableConv2D"; }
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
  Activation output_activation() const override { return activation_; }
  void set_output_logits(bool logits) override { logits_ = logits; }

 private:
  Activation applied() const { return logits_ ? Activation::linear : activation_; }
  // The depthwise convolution's output for an input of shape s.
  Shape depthwise_shape(const Shape& s) const;
  int filters_;
  Size2 kernel_;
  axon_conv2d_attrs depthwise_, pointwise_;
  int multiplier_;
  Activation activation_;
  bool use_bias_;
  bool logits_ = false;
  Kept kept_;
  Tensor t_;  // the depthwise convolution's output, kept for the backward
};

}  // namespace axon::nn
