// The layer interface of the training stack: explicit forward and backward
// per layer (llm.c style), each a few op calls. A layer is one node of a
// model's graph: one or more inputs (merge layers take several), one output.
// Everything a layer is lives in one place, its own file under
// core/src/nn/layers/: its Keras class name and config (read through the
// layer registry, written by write_config), its output shape (device-free),
// its weights with Keras' names, order and layouts, and its forward and
// backward passes. Activations and gradients come from the replica's tensor
// pool and live only as long as a handle to them does: a layer keeps what
// its backward needs (only while training) and lets go of it there.
#pragma once

#include <axon/nn/activation.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/random.hpp>
#include <axon/nn/regularizer.hpp>
#include <axon/tensor.hpp>
#include <axon/tensor_pool.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace axon::nn {

class KerasConfigWriter;

// A weight and its gradient (same shape, same device). Non-trainable weights
// (BatchNormalization's moving statistics) have no gradient and are changed
// by their layer's forward pass, not by the optimizer.
struct Parameter {
  std::string name;  // "conv2d/kernel"
  Tensor value;
  Tensor grad;  // undefined when not trainable
  bool trainable = true;
};

// What a layer may ask of the training step it runs in: a replica's view of
// the step (synchronized batch normalisation sums its statistics over every
// replica of every worker, mid-step).
class StepContext {
 public:
  virtual ~StepContext() = default;
  // Sums `t` (float32, the same shape on every replica) over every replica
  // of every worker, in place. Every replica calls it at the same point of
  // the step; with one replica it does nothing.
  virtual void all_reduce(Tensor& t, const std::string& what) = 0;
  // The samples of the global batch this step (over every replica).
  virtual int64_t global_samples() const = 0;
  // The training step (0-based, counted over the whole run, so a resumed
  // run counts on) and where this replica's samples start in its global
  // batch: what augmentation draws are keyed by.
  virtual int64_t step_index() const = 0;
  virtual int64_t first_sample() const = 0;
};

// Keras' initializers the layers use for their weights.
enum class Initializer { glorot_uniform, zeros, ones };

// A weight a layer creates, known before anything is allocated.
struct WeightSpec {
  std::string name;  // Keras' name within the layer: "kernel", "bias", "moving_mean"
  Shape shape;
  Initializer initializer = Initializer::zeros;
  bool trainable = true;
};

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // Keras class name: "Conv2D", "Dense", ...
  virtual const char* type() const = 0;
  // The Python module Keras finds the class in; a class Keras registers
  // outside keras.layers (ConvNeXt's LayerScale) is written with its
  // registered name too.
  virtual const char* keras_module() const { return "keras.layers"; }
  // An unbuilt layer of the same kind, settings and name: a replica's copy.
  virtual std::unique_ptr<Layer> clone() const = 0;
  // The layer's own keys of its Keras config (Keras 3's layout); the caller
  // adds name, trainable and dtype.
  virtual void write_config(KerasConfigWriter& config) const = 0;

  // How many inputs the layer takes (merge layers: 2 or more).
  virtual int min_inputs() const { return 1; }
  virtual int max_inputs() const { return 1; }
  // Empty when n inputs suit the layer, else why not ("takes from 2 to 64
  // inputs, got 65").
  std::string input_count_error(int n) const;
  // The per-sample output shape for these per-sample input shapes, without
  // a device; UsageError saying why the inputs do not fit.
  virtual Shape output_shape(std::span<const Shape> inputs) const = 0;
  // The weights the layer creates for these inputs, in Keras' order.
  virtual std::vector<WeightSpec> weight_specs(std::span<const Shape> inputs) const {
    (void)inputs;
    return {};
  }

  // Creates the weights on `device` (initial values drawn from `rng` in
  // weight_specs order), takes activation memory from `pool`.
  // Returns the per-sample output shape.
  const Shape& build(std::span<const Shape> inputs, Device& device, Rng& rng, TensorPool& pool);
  const Shape& build(const Shape& input, Device& device, Rng& rng, TensorPool& pool) {
    return build({&input, 1}, device, rng, pool);
  }
  // A layer used on its own (tests, eager use): its memory comes from a pool of its own.
  const Shape& build(const Shape& input, Device& device, Rng& rng);
  bool built() const { return device_ != nullptr; }
  const std::vector<Shape>& input_shapes() const { return input_shapes_; }
  const Shape& input_shape() const { return input_shapes_.at(0); }
  const Shape& output_shape() const { return output_shape_; }
  Device& device() const;

  // Every weight, trainable or not, in Keras' order ("kernel", "bias", ...).
  std::vector<Parameter*> parameters();
  // The initializer a config names for weight `weight` ("kernel"), where it
  // is not the layer's default (before build); the one in use, named as
  // Keras names it, for the writer (`fallback`: the default's class).
  void set_initializer(const std::string& weight, KerasInitializer init);
  KerasInitializer initializer(const std::string& weight, const char* fallback) const;
  // The regularizer of weight `weight` (kernel_regularizer=L1L2(...);
  // before build).
  void set_regularizer(const std::string& weight, Regularizer r);
  Regularizer regularizer(const std::string& weight) const;
  // The built layer's weights that carry a regularizer, with it.
  std::vector<std::pair<Parameter*, Regularizer>> regularized_weights();
  // Another layer's initializers and regularizers (a replica's copy of it).
  void copy_weight_settings(const Layer& other) {
    initializers_ = other.initializers_;
    regularizers_ = other.regularizers_;
  }
  const Parameter& weight(size_t i) const { return weights_.at(i); }
  Parameter& weight(size_t i) { return weights_.at(i); }
  int64_t parameter_count(bool trainable_only = false) const;

  // x[i]: [N, input_shapes()[i]...]. Returns the output [N, output_shape()...].
  virtual Tensor forward(std::span<const Tensor> x) = 0;
  // After a forward with remembers() true: given dy = dLoss/dy, writes the
  // trainable weights' gradients and, for each input i with need_dx[i],
  // dx[i] = dLoss/dx[i] (left empty otherwise); where adds_into_dx() and
  // dx[i] arrives holding a tensor, dx[i] += dLoss/dx[i] in that tensor
  // instead. Lets go of what the forward kept. dy is read only.
  virtual void backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) = 0;
  // Whether backward adds its input gradients into gradients handed to it
  // (an input read by several layers: the sum of the others' so far), so
  // that no separate AddN pass over the tensor is needed.
  virtual bool adds_into_dx() const { return false; }
  // One-input forms.
  Tensor forward(const Tensor& x) { return forward(std::span<const Tensor>(&x, 1)); }
  Tensor backward(const Tensor& dy, bool need_dx);

  // Whether the next forward is a training step (Dropout drops, batch
  // normalisation uses the batch's statistics).
  void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }
  // Whether a backward follows the next forward (the model turns it off for
  // layers no gradient flows through): only then does forward keep tensors.
  void set_backprop(bool backprop) { backprop_ = backprop; }
  bool remembers() const { return training_ && backprop_; }

  // Whether the layer may use fused ops (_FusedConv2D, ...) where the device
  // its op runs on has one (default true). Tests turn it off to compare the
  // fused and the separate-op paths.
  void set_fused_ops(bool allowed) { fused_ops_ = allowed; }
  bool fused_ops() const;

  // The activation a layer applies last (linear for most). As the model's
  // output, a cross-entropy may read its logits instead: set_output_logits
  // leaves the activation out (docs/training.md, "Models from Keras").
  virtual Activation output_activation() const { return Activation::linear; }
  bool ends_in_softmax() const { return output_activation() == Activation::softmax; }
  virtual void set_output_logits(bool logits) { (void)logits; }

  // The step this layer's replica runs (set by the replica; nullptr for a
  // layer used on its own).
  void set_step_context(StepContext* context) { step_ = context; }
  // For a replica that got no samples of this step's batch: take part in
  // the collectives the layer's forward (or backward) would have made, with
  // zeros, so the other replicas do not wait for it.
  virtual void join_without_samples(bool forward) { (void)forward; }
  // Whether the layer makes collectives mid-step (join_without_samples then
  // matters).
  virtual bool synchronizes() const { return false; }

  // Whether the layer scales raw pixel values itself (Rescaling): a model
  // whose input only such layers read gets the pixels as they are (0 to
  // 255, as Keras' fit would), not divided by 255.
  virtual bool scales_pixels() const { return false; }

  // Whether the layer is an image augmentation (augmentation.hpp): pixels
  // keep their scale through it, and no gradient may flow through it.
  virtual bool augments() const { return false; }

  // Multiply-adds x 2 per sample, for FLOP accounting in benchmarks.
  virtual int64_t forward_flops() const { return 0; }
  virtual int64_t backward_flops(bool need_dx) const {
    (void)need_dx;
    return 0;
  }

 protected:
  // After the weights exist: anything else the layer sets up (Dropout's mask
  // stream draws its seed from `rng` here).
  virtual void on_build(Device& device, Rng& rng) {
    (void)device;
    (void)rng;
  }
  // A tensor [n, per_sample...] from the pool.
  Tensor take(int64_t n, const Shape& per_sample, axon_dtype dtype = AXON_FLOAT32) const;
  Tensor take_like(const Tensor& t) const;
  // The end of a convolution's or product's forward, z holding its result:
  // the bias added to z in place (bias null: none), then y = act(z) (y is z
  // where act is linear).
  void add_bias_and_activate(Activation act, const Tensor* bias, Tensor& z, Tensor& y) const;
  // What such a layer's backward reads of its forward: its input, its output
  // and, where the activation's gradient reads it (uses_input), z.
  struct Kept {
    Tensor x, z, y;
  };
  // Where the op writes before bias and activation: y itself where act is
  // linear, else a tensor of y's shape.
  Tensor take_pre_activation(Activation act, const Tensor& y) const;
  // add_bias_and_activate, then x, y and z (as Kept says) into `kept` when
  // remembers().
  void finish_forward(Activation act, const Tensor* bias, const Tensor& x, Tensor& z, Tensor& y, Kept& kept) const;
  // Its gradient: dy through the activation (dy itself where linear; z or
  // y read as uses_input says), and the bias's into bias_grad (null: none).
  Tensor bias_and_activation_grad(Activation act, const Tensor& dy, const Tensor& z, const Tensor& y,
                                  Tensor* bias_grad) const;
  // A tensor of exactly this shape (per-channel statistics, ...).
  Tensor take_exact(Shape shape) const;
  // Part g of `groups` equal parts of a rank-4 tensor's last axis (a group
  // of channels, or of a kernel's filters), copied out by Slice.
  Tensor group_part(const Tensor& t, int64_t groups, int64_t g) const;
  // The inverse: `parts` (each reshaped to a part of `whole`) joined along
  // the last axis of the rank-4 `whole` by ConcatV2.
  void join_groups(const std::vector<Tensor>& parts, Tensor& whole) const;
  // A vector of K factors, one per channel of an image [N, H, W, K], as the
  // 1x1 DepthwiseConv2dNative filter [1, 1, K, 1] that multiplies each value
  // by its channel's factor (one product a value), with that op's attrs.
  static Tensor channel_filter(const Tensor& factors) { return factors.reshaped({1, 1, factors.numel(), 1}); }
  static const axon_conv2d_attrs& channel_product();
  // "Conv2D 'conv2d_1'", for messages.
  std::string what() const;
  StepContext* step_context() const { return step_; }

 private:
  std::string name_;
  Device* device_ = nullptr;
  TensorPool* pool_ = nullptr;
  std::unique_ptr<TensorPool> own_pool_;
  StepContext* step_ = nullptr;
  std::vector<Shape> input_shapes_;
  Shape output_shape_;
  std::vector<Parameter> weights_;
  std::map<std::string, KerasInitializer> initializers_;  // by weight name: set_initializer's
  std::map<std::string, Regularizer> regularizers_;       // by weight name: set_regularizer's
  bool fused_ops_ = true;
  bool training_ = false;
  bool backprop_ = true;
};

// Keras' default names: "conv2d" for Conv2D, "max_pooling2d", "re_lu", ...
std::string default_layer_name(const std::string& keras_class);

}  // namespace axon::nn
