// A Keras-like model for image classification: a graph of layers (Keras'
// functional Model: any DAG with one input and one output; Sequential is
// the special case of a chain), NHWC images in (uint8 ones scaled to [0, 1]
// on the device), logits out. compile() picks the optimizer, fit() trains,
// evaluate() and predict() run inference. Built under a distribution
// strategy, the model is one Replica per device of the strategy; a step
// splits the global batch over all replicas, runs them at once (a host
// thread each), sums their gradients with the strategy's all-reduce and
// applies the same update everywhere.
#pragma once

#include <axon/data/batches.hpp>
#include <axon/data/mnist.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/layer.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/nn/replica.hpp>
#include <axon/placement_plan.hpp>
#include <axon/strategy.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

class BucketProgress;
class ReplicaThreads;
class StepCollective;

struct FitOptions {
  int epochs = 1;
  int64_t batch_size = 32;                            // the global batch, over all replicas
  bool shuffle = true;
  uint64_t seed = 0;                                  // the shuffle order of each epoch
  const data::SampleSource* validation_data = nullptr;  // evaluated after each epoch
  int64_t steps_per_epoch = 0;                        // 0: the whole training set
  bool prefetch = true;                               // prepare batches on a background thread
  std::vector<Callback*> callbacks;
  // Sets the learning rate before every step from the optimizer's
  // iterations (Keras' LearningRateSchedule); none: the rate stays.
  const LearningRateSchedule* learning_rate_schedule = nullptr;
  // Resuming (Keras' initial_epoch): epochs already done, and steps already
  // done of the next one; fit trains the rest of that epoch, in the same
  // order, then epochs initial_epoch + 2 .. epochs.
  int initial_epoch = 0;
  int64_t initial_step = 0;
  // Polled before every step (a signal's flag): when it says so, fit
  // returns with History::stopped. Under multi-worker every worker must
  // pass one; they agree every kStopPollSteps steps.
  std::function<bool()> stop_requested;
};

// How often (in steps) the workers of a multi-worker run agree on a stop.
inline constexpr int64_t kStopPollSteps = 16;

class Model {
 public:
  explicit Model(std::string name = "functional");
  virtual ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Adds a layer reading the outputs of earlier nodes (kModelInput: the
  // model's input); returns its node index. The last node added is the
  // model's output. Layer names must be unique.
  int add_node(std::unique_ptr<Layer> layer, std::vector<int> inputs);
  // The input as the model declares it, where that is [H, W]: Keras'
  // Input((H, W)), which reads one-channel images [H, W, 1] without their
  // channel axis (before build).
  void declare_input(Shape hw);
  // The per-sample shape the layers reading the input see, for images of
  // shape `images` ([H, W, C]).
  Shape graph_input(const Shape& images) const;

  // Builds one replica per device of `strategy` (which must outlive the
  // model) for per-sample input shape [H, W, C]. Replica 0's initial weights
  // depend only on `seed`; the strategy broadcasts them to every replica.
  void build(const Shape& input_shape, Strategy& strategy, uint64_t seed);
  // On one device (a default strategy of the model's own).
  void build(const Shape& input_shape, Device& device, uint64_t seed);
  bool built() const { return !replicas_.empty(); }

  // UsageError when the loss does not fit the model's output, or for a bad
  // metric list (check_metrics).
  void compile(const OptimizerOptions& optimizer = {}, const LossOptions& loss = {},
               const std::vector<MetricOptions>& metrics = {});

  History fit(const data::SampleSource& train, const FitOptions& options);
  // batch_size is the global batch, split over the replicas.
  MetricValues evaluate(const data::SampleSource& set, int64_t batch_size = 32);
  // Logits [count, classes], row-major (on replica 0).
  std::vector<float> predict(const data::SampleSource& set, int64_t batch_size = 32);

  // One optimisation step on a host batch, the global batch (fit's inner
  // loop): compute_gradients then one optimizer update on every replica.
  void train_step(const data::HostBatch& batch);
  // The placement of one training step on replica 0's device, recorded and
  // not run (placement_plan.hpp): every (op, dtype, layer) with its device,
  // and every kernel that device lacks. The model's state (weights, step
  // counts, metric totals) is as before.
  PlacementPlan plan_train_step(const data::HostBatch& batch);
  // Forward, loss, backward on every replica's part of the batch, then the
  // all-reduce: every Parameter::grad holds the gradient of the batch's mean
  // loss, without updating the weights. The loss and accuracy also
  // accumulate into metrics().
  void compute_gradients(const data::HostBatch& batch);
  // Replica 0's per-sample losses of its last batch of that size.
  const Tensor& per_sample_loss(int64_t batch_size) const;
  // Forward pass of the whole batch on replica 0; returns its logits.
  Tensor forward(const data::HostBatch& batch);

  const std::string& name() const { return name_; }
  // The graph: node i's layer (replica 0's once built) and the nodes it reads.
  int num_nodes() const { return static_cast<int>(graph_.inputs.size()); }
  const std::vector<int>& node_inputs(int node) const { return graph_.inputs.at(static_cast<size_t>(node)); }
  // Whether every node reads the one before it (a Keras Sequential).
  bool is_chain() const;
  // Replica 0's layers in node order (the model's, before build()).
  std::vector<Layer*> layers();
  std::vector<Parameter*> parameters();
  int64_t parameter_count(bool trainable_only = false);
  int num_replicas() const { return static_cast<int>(replicas_.size()); }
  // How many all-reduces a step's gradients take: 1, or the buckets of
  // Strategy::bucket_bytes() run while backward goes on.
  int all_reduce_buckets() const;
  Replica& replica(int r);
  Device& device() const;  // replica 0's
  const Strategy& strategy() const;
  Strategy& strategy();
  const Shape& input_shape() const { return input_shape_; }
  // The training loss and accuracy totals, over every replica.
  DeviceMetrics& metrics();
  const Optimizer& optimizer() const;
  const Loss& loss() const;
  // The learning rate of the next steps, on every replica (a schedule's hook).
  void set_learning_rate(float lr);
  // Keras-style model.summary() text (of a built model, or for this input
  // shape: no device is needed).
  std::string summary();
  std::string summary(const Shape& input_shape);
  // FLOPs of one training sample, forward and backward (no input gradient
  // where none is needed): what "effective GFLOP/s" is measured against.
  int64_t training_flops_per_sample();
  int64_t inference_flops_per_sample();

 protected:
  Graph graph_;  // until build() hands the layers to replica 0

 private:
  Samples slice(const data::HostBatch& batch, int replica) const;
  void check_batch(const data::HostBatch& batch) const;
  void check_set(const data::SampleSource& set, const char* what) const;
  // Calls f(r) for every replica at once (and `alongside` on this thread,
  // where the threads keep it free); adds the time to the epoch's figures.
  void on_replicas(const std::function<void(int)>& f, const std::function<void()>& alongside = {});
  // compute_gradients, the all-reduce, then the metric totals and (when
  // `update`) the optimizer step on every replica.
  void step(const data::HostBatch& batch, bool update);
  // Buckets, when the strategy overlaps the all-reduce with backward.
  void plan_overlap();
  // compute(r) on every replica while this thread all-reduces the buckets.
  void overlapped_step(const std::function<void(int)>& compute, const std::vector<Tensor*>& grads);

  std::string name_;
  std::unique_ptr<Strategy> own_strategy_;  // build(shape, device, seed)
  Strategy* strategy_ = nullptr;
  Shape input_shape_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::unique_ptr<ReplicaThreads> threads_;  // with more than one replica
  std::unique_ptr<StepCollective> collective_;  // with more than one replica in all
  std::unique_ptr<BucketProgress> progress_;     // when the all-reduce overlaps backward
  std::vector<std::string> bucket_names_;        // "gradients (bucket 2 of 4)", for errors
  // Per bucket, where the strategy queues the all-reduce on the devices: the
  // point each replica's backward has written it to (ready), and the point
  // its sum is in (done), one event per replica.
  struct QueuedBucket {
    std::vector<DeviceEvent> ready, done;
    std::vector<axon_event> ready_events, done_events;
  };
  std::vector<QueuedBucket> queued_;
  int64_t steps_ = 0;                         // optimisation steps so far (for messages)
  // This epoch's time per replica (compute, wait) and in the all-reduce.
  std::vector<ReplicaTimes> times_;
  double all_reduce_seconds_ = 0;         // the all-reduce the step waited for
  double all_reduce_hidden_seconds_ = 0;  // the all-reduce that ran behind backward
};

// Keras' Sequential: each layer reads the one before it.
class Sequential : public Model {
 public:
  explicit Sequential(std::string name = "sequential") : Model(std::move(name)) {}
  // Appends a layer; a default name ("conv2d") becomes unique as in Keras
  // ("conv2d", "conv2d_1", ...).
  Sequential& add(std::unique_ptr<Layer> layer);
  template <class L, class... Args>
  Sequential& add(Args&&... args) {
    return add(std::make_unique<L>(std::forward<Args>(args)...));
  }

 private:
  std::map<std::string, int> name_counts_;
};

// The trainer's model (TensorFlow's CNN tutorial, 16.4 MFLOP per training
// sample at 28x28x1): Conv2D(32, 3, relu), MaxPooling2D(2), Conv2D(64, 3,
// relu), MaxPooling2D(2), Conv2D(64, 3, relu), Flatten, Dense(64, relu),
// Dense(classes) -> logits.
std::unique_ptr<Sequential> make_cnn(int classes = 10);

}  // namespace axon::nn
