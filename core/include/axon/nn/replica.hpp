// One copy of a Sequential model on one device: its layers, their flat
// parameter buffers, Adam's state, the input buffers per batch size, the
// loss and the metric totals. A strategy runs one replica per device; every
// replica holds the same weights and applies the same summed gradients.
#pragma once

#include <axon/nn/layer.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/nn/parameter_buffers.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace axon::nn {

class MaxPooling2D;

// Consecutive samples of a host batch: uint8 NHWC images and int32 labels.
struct Samples {
  const uint8_t* images = nullptr;
  const int32_t* labels = nullptr;
  int64_t count = 0;
};

class Replica {
 public:
  // Builds `layers` for the per-sample input shape [H, W, C] on `device`,
  // initial weights drawn from `rng`, and moves the parameters into flat
  // buffers.
  Replica(std::vector<std::unique_ptr<Layer>> layers, const Shape& input_shape, Device& device, Rng& rng);
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  Device& device() const { return *device_; }
  std::vector<Layer*> layers();
  std::vector<Parameter*> parameters();
  ParameterBuffers& buffers() { return buffers_; }
  DeviceMetrics& train_metrics() { return train_metrics_; }
  DeviceMetrics& eval_metrics() { return eval_metrics_; }

  void compile(const AdamOptions& optimizer, const SparseCategoricalCrossentropy& loss);
  bool compiled() const { return optimizer_.has_value(); }
  const Adam& optimizer() const;
  Adam& optimizer();

  // Forward pass only; returns the logits for these samples (count > 0).
  // training: a training step (Dropout drops); else inference.
  const Tensor& forward(const Samples& s, bool training = false);
  // Forward, the loss divided by global_batch, the batch's loss sum and
  // correct count into the gradient buffer's two extra floats (so the
  // strategy's all-reduce sums them with the gradients), and backward into
  // the gradient buffer. Without samples, gradients and sums are zero.
  void compute_gradients(const Samples& s, int64_t global_batch);
  // After the strategy summed the gradient buffers: the step's sums (now
  // over every replica, global_samples samples) into the training totals,
  // and one Adam update when `update`.
  void apply_gradients(int64_t global_samples, bool update);
  // Forward and loss on a validation batch; its sums into the eval totals.
  void evaluate(const Samples& s);
  // The per-sample losses of the last compute_gradients/evaluate of that size.
  const Tensor& per_sample_loss(int64_t count) const;

 private:
  struct Inputs {
    Tensor pixels;  // uint8 [N, H, W, C]
    Tensor images;  // float32 [N, H, W, C]
    Tensor labels;  // int32 [N]
  };
  Inputs& upload(const Samples& s);

  Device* device_;
  Shape input_shape_;
  std::vector<std::unique_ptr<Layer>> layers_;
  ParameterBuffers buffers_;
  std::optional<Adam> optimizer_;
  std::optional<SparseCategoricalCrossentropy> loss_;
  DeviceMetrics train_metrics_, eval_metrics_;
  Tensor eval_sums_;  // [2] one validation batch's loss sum and correct count
  std::map<int64_t, Inputs> inputs_;
  std::vector<const Tensor*> layer_inputs_;  // the input of each layer in the last forward
  // pool_after_[i]: the MaxPooling2D right after layer i when layer i is a
  // Conv2D (the pair may run fused), else nullptr; pooled_[i]: whether the
  // last forward ran layers i and i + 1 as that fused pair.
  std::vector<MaxPooling2D*> pool_after_;
  std::vector<char> pooled_;
};

}  // namespace axon::nn
