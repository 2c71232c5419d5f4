// The layer interface of the training stack: explicit forward and backward
// per layer (llm.c style), each a few op calls. A layer owns its output and
// input-gradient buffers, one set per batch size, created on the first batch
// of that size and reused for every later one (no per-step allocation).
#pragma once

#include <axon/nn/random.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace axon::nn {

// A trainable tensor and its gradient (same shape, same device).
struct Parameter {
  std::string name;  // "conv2d/kernel"
  Tensor value;
  Tensor grad;
};

// softmax only ends a model (Dense): the layer outputs logits and the loss
// applies the softmax (docs/training.md, "Models from Keras").
enum class Activation { linear, relu, softmax };
const char* activation_name(Activation a);

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
  // An unbuilt layer of the same kind, settings and name: a replica's copy.
  virtual std::unique_ptr<Layer> clone() const = 0;

  // Creates the parameters for a per-sample input shape (no batch dimension)
  // on `device`, initialised from `rng`; returns the per-sample output shape.
  // Throws UsageError when the input shape does not fit the layer.
  Shape build(const Shape& input_shape, Device& device, Rng& rng);
  bool built() const { return device_ != nullptr; }
  const Shape& input_shape() const { return input_shape_; }
  const Shape& output_shape() const { return output_shape_; }
  Device& device() const;

  virtual std::vector<Parameter*> parameters() { return {}; }
  int64_t parameter_count();

  // x: [N, input_shape...]. Returns the layer's output for this batch; the
  // reference stays valid until the next forward with the same N.
  virtual const Tensor& forward(const Tensor& x) = 0;
  // After forward(x): given dy = dLoss/dy, writes the parameter gradients and,
  // when need_dx, returns dLoss/dx (else an empty tensor).
  virtual const Tensor& backward(const Tensor& x, const Tensor& dy, bool need_dx) = 0;

  // Whether the layer may use a fused op (_FusedConv2D, ...) where the device
  // its op runs on has one (default true). Tests turn it off to compare the
  // fused and the separate-op paths.
  void set_fused_ops(bool allowed) { fused_ops_ = allowed; }
  bool fused_ops() const { return fused_ops_; }

  // Whether the next forward is a training step (Dropout drops only then).
  void set_training(bool training) { training_ = training; }
  bool training() const { return training_; }

  // Multiply-adds x 2 per sample, for FLOP accounting in benchmarks.
  virtual int64_t forward_flops() const { return 0; }
  virtual int64_t backward_flops(bool need_dx) const { (void)need_dx; return 0; }

 protected:
  virtual Shape do_build(const Shape& input_shape, Device& device, Rng& rng) = 0;
  // The buffer `slot` for batch size n with per-sample shape `per_sample`,
  // allocated on first use.
  Tensor& buffer(int slot, int64_t n, const Shape& per_sample, axon_dtype dtype = AXON_FLOAT32);
  // The empty tensor returned by backward when need_dx is false.
  static const Tensor& none();
  // The device `plain_op` (first input `x`) would run on, when that device
  // also has a kernel for `fused_op` and fused ops are allowed; else nullptr.
  // Run the fused op under a DeviceScope of the result, so it goes exactly
  // where the separate ops would have gone.
  Device* fused_device(OpId fused_op, OpId plain_op, const Tensor& x) const;

 private:
  std::string name_;
  Device* device_ = nullptr;
  Shape input_shape_, output_shape_;
  std::map<std::pair<int, int64_t>, Tensor> buffers_;
  bool fused_ops_ = true;
  bool training_ = false;
};

}  // namespace axon::nn
