// One copy of a model on one device: its graph of layers, their flat
// parameter buffers, the optimizer's state, the input buffers per batch size, the
// tensor pool activations and gradients come from, the loss and the metric
// totals. A strategy runs one replica per device; every replica holds the
// same weights and applies the same summed gradients.
//
// A step runs the fusion pass's plan (fusion.hpp): the graph's nodes in
// topological order, where a pair the pass fused is one step. Each output is
// released as soon as its last reader has run (the layers keep what their
// backward needs); the backward walks the plan in reverse, summing the
// gradients of an output read by several layers.
#pragma once

#include <axon/data/sample_source.hpp>
#include <axon/nn/layer.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/nn/parameter_buffers.hpp>
#include <axon/tensor_pool.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

// Consecutive samples of a host batch: NHWC images (uint8, or float32 as
// `format` says) and int32 labels.
struct Samples {
  const uint8_t* images = nullptr;
  const int32_t* labels = nullptr;
  int64_t count = 0;
  data::PixelFormat format = data::PixelFormat::kUint8;
  int64_t offset = 0;  // where the first of them is in the step's global batch
};

// A node reads the model's input.
inline constexpr int kModelInput = -1;

// A model's layers and what each reads: node i is layers[i], reading the
// outputs of the nodes inputs[i] (earlier nodes, or kModelInput). The last
// node is the output.
struct Graph {
  std::vector<std::unique_ptr<Layer>> layers;
  std::vector<std::vector<int>> inputs;
  // What the nodes reading kModelInput see where it is not the images' [H,
  // W, C]: [H, W] for Keras' Input((H, W)), one-channel images without their
  // channel axis. Empty: the images' shape.
  Shape input;
};

// Each node's per-sample output shape, without a device; a UsageError names
// the layer whose inputs do not fit.
std::vector<Shape> output_shapes(const std::vector<Layer*>& layers, const std::vector<std::vector<int>>& inputs,
                                 const Shape& input_shape);

// One step of the plan: a layer (a graph node's, or one the fusion pass made
// of two or three), the nodes it reads, the nodes it stands for (first to
// output), the node whose output it writes.
struct PlanStep {
  Layer* layer = nullptr;
  std::vector<int> inputs;
  int first = 0;
  int output = 0;
  bool backprop = true;  // whether a gradient flows into it (or its weights)
  std::unique_ptr<Layer> fused;  // owned when the pass made it
  std::string fused_from;        // "conv2d + max_pooling2d" for the placement log
};

class StepCollective;
class BucketProgress;

class Replica {
 public:
  // Builds the graph's layers for the per-sample input shape [H, W, C] on
  // `device`, initial weights drawn from `rng` in node order, moves the
  // weights into flat buffers and plans the steps.
  Replica(Graph graph, const Shape& input_shape, Device& device, Rng& rng);
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  Device& device() const { return *device_; }
  const Graph& graph() const { return graph_; }
  std::vector<Layer*> layers();
  // Every weight in Keras' order (layer by layer), trainable or not.
  std::vector<Parameter*> parameters();
  ParameterBuffers& buffers() { return buffers_; }
  DeviceMetrics& train_metrics() { return train_metrics_; }
  DeviceMetrics& eval_metrics() { return eval_metrics_; }
  const std::vector<PlanStep>& plan() const { return plan_; }
  TensorPool& pool() { return pool_; }
  // Whether the model gets pixels as they are (0 to 255): every layer that
  // reads its input scales them itself (Rescaling); else divided by 255.
  bool raw_pixels() const { return raw_pixels_; }
  // Whether the gradient of the node's output is needed (a trainable weight at or before it).
  bool needs_grad(int node) const { return node >= 0 && needs_grad_[static_cast<size_t>(node)]; }

  // Joins the mid-step collectives of the model's replicas as local replica
  // `index` (nullptr: this replica is the only one).
  void set_collective(StepCollective* collective, int index);
  // Reports to `progress` as local replica `index` which gradients backward
  // has written, for an all-reduce overlapped with it (nullptr: none).
  void set_bucket_progress(BucketProgress* progress, int index);
  // Whether some layer makes mid-step collectives (synchronized batch normalisation).
  bool synchronizes() const { return synchronizes_; }

  // The optimizer, the loss (which decides whether the output layer's
  // softmax or sigmoid is left to it, and the accuracy reported) and the
  // metrics besides accuracy.
  void compile(const OptimizerOptions& optimizer, const LossOptions& loss,
               const std::vector<MetricOptions>& metrics = {});
  bool compiled() const { return optimizer_ != nullptr; }
  const Optimizer& optimizer() const;
  Optimizer& optimizer();
  const Loss& loss() const;

  // Forward pass only; returns the logits for these samples (count > 0).
  // training: a training step (Dropout drops); else inference.
  Tensor forward(const Samples& s, bool training = false);
  // Forward, the loss divided by global_batch, the batch's loss sum and
  // correct count into the gradient buffer's two extra floats (so the
  // strategy's all-reduce sums them with the gradients), and backward into
  // the gradient buffer. Without samples, gradients and sums are zero.
  void compute_gradients(const Samples& s, int64_t global_batch);
  // After the strategy summed the gradient buffers: the step's sums (now
  // over every replica, global_samples samples) into the training totals,
  // and one optimizer update when `update`.
  void apply_gradients(int64_t global_samples, bool update);
  // Forward and loss on a validation batch; its sums into the eval totals.
  void evaluate(const Samples& s);
  // The per-sample losses of the last compute_gradients/evaluate of that size.
  const Tensor& per_sample_loss(int64_t count) const;

 private:
  // This step's metric sums, in the gradient buffer after the parameters'.
  Tensor metric_sums();
  struct Inputs {
    Tensor pixels;  // uint8 [N, H, W, C], for uint8 samples only
    Tensor images;  // float32 [N, H, W, C]
    Tensor labels;  // int32 [N]
  };
  Inputs& upload(const Samples& s);
  void backward(const Tensor& dlogits);
  void accumulate(int node, const Tensor& g);
  // Moves input i's gradient sum so far into dx, for a layer that adds into
  // it (Layer::adds_into_dx), where it may be updated in place.
  void hand_over(const PlanStep& step, size_t i, Tensor& dx);
  // A step without samples: zero gradients, and the collectives joined.
  void join_without_samples();
  // Keras' regularizers: l1 sum(|w|) + l2 sum(w^2) per weight, times
  // `samples`, added to a batch's loss sum; and l1 sign(w) + 2 l2 w, times
  // this replica's share of the global batch (the replicas' shares sum to
  // 1), added to the gradients of the layers of plan step `step`.
  void add_penalties(Tensor& loss_sum, int64_t samples);
  void add_penalty_gradients(const PlanStep& step);
  // Per node, its layer's weights that carry a regularizer, with it (found
  // once, at construction); whether any node has one.
  std::vector<std::vector<std::pair<Parameter*, Regularizer>>> regularized_;
  bool any_regularized_ = false;
  double batch_share_ = 0;  // this step's samples over the global batch

  // The step as the layers see it: the mid-step all-reduce, the global batch.
  class Step : public StepContext {
   public:
    void all_reduce(Tensor& t, const std::string& what) override;
    int64_t global_samples() const override { return global_samples_; }
    int64_t step_index() const override { return step_index_; }
    int64_t first_sample() const override { return first_sample_; }
    StepCollective* collective = nullptr;
    int index = 0;
    int64_t global_samples_ = 0, step_index_ = 0, first_sample_ = 0;
  };

  Device* device_;
  Shape input_shape_;
  Graph graph_;
  TensorPool pool_;
  std::vector<PlanStep> plan_;
  std::vector<char> needs_grad_;     // per node
  std::vector<int> readers_;         // per node: the plan steps that read it
  ParameterBuffers buffers_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Loss> loss_;
  DeviceMetrics train_metrics_, eval_metrics_;
  Tensor eval_sums_;  // one validation batch's loss sum, correct count and metric sums
  std::map<int64_t, Inputs> inputs_;
  // Per node, during a step: its output until its last reader ran, and the
  // gradient of its output until its own backward.
  std::vector<Tensor> outputs_, grads_;
  std::vector<int> left_;          // readers still to run in this forward
  std::unique_ptr<bool[]> need_;   // which inputs of a step need their gradient
  bool raw_pixels_ = false;        // the input goes to layers that scale pixels themselves
  bool synchronizes_ = false;      // some layer makes mid-step collectives
  Step step_;
  BucketProgress* progress_ = nullptr;
  int progress_index_ = 0;
};

}  // namespace axon::nn
