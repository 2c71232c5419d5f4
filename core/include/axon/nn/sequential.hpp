// A Keras-like Sequential model for image classification: layers in order,
// uint8 NHWC images in (scaled to [0, 1] on the device), logits out.
// compile() picks the optimizer, fit() trains, evaluate() and predict() run
// inference. All work runs on the device the model was built on.
#pragma once

#include <axon/data/batches.hpp>
#include <axon/data/mnist.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/layer.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/strategy.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

class MaxPooling2D;

struct FitOptions {
  int epochs = 1;
  int64_t batch_size = 32;
  bool shuffle = true;
  uint64_t seed = 0;                                  // the shuffle order of each epoch
  const data::ImageSet* validation_data = nullptr;    // evaluated after each epoch
  int64_t steps_per_epoch = 0;                        // 0: the whole training set
  bool prefetch = true;                               // prepare batches on a background thread
  std::vector<Callback*> callbacks;
};

class Sequential {
 public:
  explicit Sequential(std::string name = "sequential") : name_(std::move(name)) {}
  Sequential(const Sequential&) = delete;
  Sequential& operator=(const Sequential&) = delete;

  // Appends a layer; a default name ("conv2d") becomes unique as in Keras
  // ("conv2d", "conv2d_1", ...).
  Sequential& add(std::unique_ptr<Layer> layer);
  template <class L, class... Args>
  Sequential& add(Args&&... args) {
    return add(std::make_unique<L>(std::forward<Args>(args)...));
  }

  // Creates every parameter on the strategy's device for per-sample input
  // shape [H, W, C]; initial weights depend only on `seed`.
  void build(const Shape& input_shape, const Strategy& strategy, uint64_t seed);
  void build(const Shape& input_shape, Device& device, uint64_t seed);
  bool built() const { return device_ != nullptr; }

  void compile(const AdamOptions& optimizer = {}, SparseCategoricalCrossentropy loss = SparseCategoricalCrossentropy(true));

  History fit(const data::ImageSet& train, const FitOptions& options);
  MetricValues evaluate(const data::ImageSet& set, int64_t batch_size = 32);
  // Logits [count, classes], row-major.
  std::vector<float> predict(const data::ImageSet& set, int64_t batch_size = 32);

  // One optimisation step on a host batch (fit's inner loop):
  // compute_gradients then one Adam update.
  void train_step(const data::HostBatch& batch);
  // Forward, loss, backward: fills every Parameter::grad with the gradient of
  // the batch's mean loss, without updating the weights. The loss and
  // accuracy also accumulate into metrics().
  void compute_gradients(const data::HostBatch& batch);
  // The per-sample losses of the last compute_gradients/evaluate batch of that size.
  const Tensor& per_sample_loss(int64_t batch_size) const;
  // Forward pass only; returns the logits buffer for the batch size.
  const Tensor& forward(const data::HostBatch& batch);

  const std::string& name() const { return name_; }
  std::vector<Layer*> layers();
  std::vector<Parameter*> parameters();
  int64_t parameter_count();
  Device& device() const;
  const Shape& input_shape() const { return input_shape_; }
  DeviceMetrics& metrics() { return train_metrics_; }
  const Adam& optimizer() const;
  // Keras-style model.summary() text.
  std::string summary();
  // FLOPs of one training sample, forward and backward (no input gradient
  // for the first layer): what "effective GFLOP/s" is measured against.
  int64_t training_flops_per_sample() const;
  int64_t inference_flops_per_sample() const;

 private:
  struct Inputs {
    Tensor pixels;  // uint8 [N, H, W, C]
    Tensor images;  // float32 [N, H, W, C]
    Tensor labels;  // int32 [N]
  };
  Inputs& upload(const data::HostBatch& batch);
  void check_batch(const data::HostBatch& batch) const;
  void check_set(const data::ImageSet& set, const char* what) const;

  std::string name_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::map<std::string, int> name_counts_;
  Device* device_ = nullptr;
  Shape input_shape_;
  std::optional<Adam> optimizer_;
  std::vector<Parameter*> params_;  // cached by compile()
  std::optional<SparseCategoricalCrossentropy> loss_;
  DeviceMetrics train_metrics_, eval_metrics_;
  std::map<int64_t, Inputs> inputs_;
  std::vector<const Tensor*> layer_inputs_;  // the input of each layer in the last forward
  // pool_after_[i]: the MaxPooling2D right after layer i when layer i is a
  // Conv2D (the pair may run fused), else nullptr; pooled_[i]: whether the
  // last forward ran layers i and i + 1 as that fused pair.
  std::vector<MaxPooling2D*> pool_after_;
  std::vector<char> pooled_;
};

// The trainer's model (TensorFlow's CNN tutorial, 16.4 MFLOP per training
// sample at 28x28x1): Conv2D(32, 3, relu), MaxPooling2D(2), Conv2D(64, 3,
// relu), MaxPooling2D(2), Conv2D(64, 3, relu), Flatten, Dense(64, relu),
// Dense(classes) -> logits.
std::unique_ptr<Sequential> make_cnn(int classes = 10);

}  // namespace axon::nn
