// Model: the model's graph of layers, its replicas, and the training loop. Per
// step: each replica computes the gradients of its part of the global batch
// (at once, a host thread each), the strategy sums the flat gradient buffers
// (with the batch's loss and accuracy sums riding along), then every replica
// adds those sums to its totals and applies one optimizer update. Nothing is read
// back to the host unless a callback asks for the metrics. Where the strategy
// allows, the sum runs in buckets on the calling thread while the replicas'
// backward goes on (gradient_buckets.hpp).
#include "fusion.hpp"
#include "gradient_buckets.hpp"
#include "replica_threads.hpp"
#include "step_collective.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/ops.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace axon::nn {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string with_commas(int64_t v) {
  // Built forwards: string::insert trips GCC 12's -Wrestrict false positive.
  const std::string digits = std::to_string(v);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') s += ',';
    s += digits[i];
  }
  return s;
}

}  // namespace

Model::Model(std::string name) : name_(std::move(name)) {}
Model::~Model() = default;

int Model::add_node(std::unique_ptr<Layer> layer, std::vector<int> inputs) {
  if (built()) throw UsageError("the model " + name_ + " is already built");
  const int node = num_nodes();
  for (int j : inputs)
    if (j < kModelInput || j >= node)
      throw UsageError("layer " + layer->name() + " reads node " + std::to_string(j) + ", which is not an earlier one");
  for (const auto& l : graph_.layers)
    if (l->name() == layer->name()) throw UsageError("two layers are named " + layer->name());
  graph_.layers.push_back(std::move(layer));
  graph_.inputs.push_back(std::move(inputs));
  return node;
}

bool Model::is_chain() const {
  for (int i = 0; i < num_nodes(); ++i)
    if (node_inputs(i) != std::vector<int>{i - 1}) return false;
  return true;
}

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
  int& count = name_counts_[layer->name()];
  if (count > 0) layer->set_name(layer->name() + "_" + std::to_string(count));
  ++count;
  const int last = num_nodes() - 1;
  add_node(std::move(layer), {last});
  return *this;
}

void Model::declare_input(Shape hw) {
  if (built()) throw UsageError("the model " + name_ + " is already built");
  if (hw.size() != 2) throw UsageError("a declared input is [height, width], got " + shape_string(hw));
  graph_.input = std::move(hw);
}

Shape Model::graph_input(const Shape& images) const { return graph_.input.empty() ? images : graph_.input; }

void Model::build(const Shape& input_shape, Device& device, uint64_t seed) {
  if (built()) throw UsageError("the model " + name_ + " is already built");
  own_strategy_ = make_one_device_strategy(device);
  build(input_shape, *own_strategy_, seed);
}

void Model::build(const Shape& input_shape, Strategy& strategy, uint64_t seed) {
  if (built()) throw UsageError("the model " + name_ + " is already built");
  if (graph_.layers.empty()) throw UsageError("the model " + name_ + " has no layers");
  if (input_shape.size() != 3) throw UsageError("the model's input shape must be [height, width, channels]");
  if (!graph_.input.empty() && (input_shape[2] != 1 || Shape{input_shape[0], input_shape[1]} != graph_.input))
    throw UsageError("the model's input is " + shape_string(graph_.input) + " (one channel: Keras' Input((" +
                     std::to_string(graph_.input[0]) + ", " + std::to_string(graph_.input[1]) + "))), the images " +
                     shape_string(input_shape));
  // Every node but the output must be read by a later one.
  std::vector<char> read(graph_.layers.size(), 0);
  for (const auto& ins : graph_.inputs)
    for (int j : ins)
      if (j >= 0) read[static_cast<size_t>(j)] = 1;
  for (size_t i = 0; i + 1 < read.size(); ++i)
    if (!read[i])
      throw UsageError("layer " + graph_.layers[i]->name() + "'s output reaches neither a later layer nor the model's output");
  const std::vector<Device*>& devices = strategy.replica_devices();
  // Copies for the other replicas, made before replica 0 takes the layers.
  std::vector<Graph> copies(devices.size() - 1);
  for (Graph& g : copies) {
    for (const auto& l : graph_.layers) {
      g.layers.push_back(l->clone());
      g.layers.back()->set_fused_ops(l->fused_ops());
      g.layers.back()->copy_weight_settings(*l);
    }
    g.inputs = graph_.inputs;
    g.input = graph_.input;
  }
  Rng rng(seed);
  replicas_.push_back(std::make_unique<Replica>(std::move(graph_), input_shape, *devices[0], rng));
  graph_.inputs = replicas_[0]->graph().inputs;
  graph_.input = replicas_[0]->graph().input;
  for (size_t r = 1; r < devices.size(); ++r) {
    // Drawn from another stream on purpose: the broadcast below must set them.
    Rng other = Rng::derive(seed, r);
    replicas_.push_back(std::make_unique<Replica>(std::move(copies[r - 1]), input_shape, *devices[r], other));
  }
  strategy_ = &strategy;
  input_shape_ = input_shape;
  // The same initial weights everywhere: global replica 0's.
  std::vector<Tensor*> values;
  for (auto& r : replicas_) values.push_back(&r->buffers().values());
  strategy.broadcast(values, "initial weights");
  // Mid-step collectives (synchronized batch normalisation) over every replica.
  if (replicas_.size() > 1 || strategy.num_workers() > 1) {
    collective_ = std::make_unique<StepCollective>(strategy, num_replicas());
    for (size_t r = 0; r < replicas_.size(); ++r) replicas_[r]->set_collective(collective_.get(), static_cast<int>(r));
  }
  plan_overlap();
  if (!progress_ && replicas_.size() > 1) threads_ = std::make_unique<ReplicaThreads>(num_replicas());
  times_.assign(replicas_.size(), {});
  for (size_t r = 0; r < replicas_.size(); ++r) times_[r].device = devices[r]->name();
}

void Model::compile(const OptimizerOptions& optimizer, const LossOptions& loss,
                    const std::vector<MetricOptions>& metrics) {
  if (!built()) throw UsageError("the model " + name_ + " is not built: build it first");
  check_metrics(metrics);
  for (auto& r : replicas_) r->compile(optimizer, loss, metrics);
}

Replica& Model::replica(int r) {
  if (r < 0 || r >= num_replicas())
    throw RuntimeError("the model " + name_ + " has no replica " + std::to_string(r));
  return *replicas_[static_cast<size_t>(r)];
}

Device& Model::device() const {
  if (!built()) throw RuntimeError("the model " + name_ + " is not built");
  return replicas_[0]->device();
}

const Strategy& Model::strategy() const {
  if (!built()) throw RuntimeError("the model " + name_ + " is not built");
  return *strategy_;
}

Strategy& Model::strategy() { return const_cast<Strategy&>(std::as_const(*this).strategy()); }

DeviceMetrics& Model::metrics() {
  if (!built()) throw RuntimeError("the model " + name_ + " is not built");
  return replicas_[0]->train_metrics();
}

const Optimizer& Model::optimizer() const {
  if (!built() || !replicas_[0]->compiled()) throw RuntimeError("the model " + name_ + " is not compiled");
  return replicas_[0]->optimizer();
}

const Loss& Model::loss() const {
  if (!built() || !replicas_[0]->compiled()) throw RuntimeError("the model " + name_ + " is not compiled");
  return replicas_[0]->loss();
}

void Model::set_learning_rate(float lr) {
  if (!built() || !replicas_[0]->compiled())
    throw UsageError("the model " + name_ + " is not compiled: compile it first");
  for (auto& r : replicas_) r->optimizer().set_learning_rate(lr);
}

std::vector<Layer*> Model::layers() {
  if (built()) return replicas_[0]->layers();
  std::vector<Layer*> v;
  for (auto& l : graph_.layers) v.push_back(l.get());
  return v;
}

std::vector<Parameter*> Model::parameters() {
  std::vector<Parameter*> v;
  for (Layer* l : layers())
    for (Parameter* p : l->parameters()) v.push_back(p);
  return v;
}

int64_t Model::parameter_count(bool trainable_only) {
  int64_t n = 0;
  for (Layer* l : layers()) n += l->parameter_count(trainable_only);
  return n;
}

int64_t Model::training_flops_per_sample() {
  if (!built()) throw RuntimeError("the model " + name_ + " is not built");
  const Replica& r = *replicas_[0];
  const std::vector<Layer*> ls = replicas_[0]->layers();
  int64_t f = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    bool need_dx = false;
    for (int j : node_inputs(static_cast<int>(i))) need_dx = need_dx || r.needs_grad(j);
    f += ls[i]->forward_flops() + ls[i]->backward_flops(need_dx);
  }
  return f;
}

int64_t Model::inference_flops_per_sample() {
  int64_t f = 0;
  for (Layer* l : layers()) f += l->forward_flops();
  return f;
}

void Model::check_batch(const data::HostBatch& batch) const {
  const int64_t per = numel(input_shape_) * data::pixel_bytes(batch.format);
  if (batch.size <= 0 || static_cast<int64_t>(batch.images.size()) != batch.size * per ||
      static_cast<int64_t>(batch.labels.size()) != batch.size)
    throw UsageError("batch of " + std::to_string(batch.size) + " samples does not match the model input " +
                     shape_string(input_shape_) + " (" + std::to_string(batch.images.size()) + " pixel bytes, " +
                     std::to_string(batch.labels.size()) + " labels)");
}

void Model::check_set(const data::SampleSource& set, const char* what) const {
  if (set.size() == 0) throw UsageError(std::string("the ") + what + " set is empty");
  if (set.layout().shape() != input_shape_)
    throw UsageError(std::string(what) + " images are " + shape_string(set.layout().shape()) +
                     " but the model expects " + shape_string(input_shape_));
}

Samples Model::slice(const data::HostBatch& batch, int replica) const {
  const auto [begin, end] = strategy_->replica_slice(batch.size, replica);
  const int64_t per = numel(input_shape_) * data::pixel_bytes(batch.format);
  return {batch.images.data() + begin * per, batch.labels.data() + begin, end - begin, batch.format, begin};
}

void Model::plan_overlap() {
  // Mid-step collectives would meet the buckets' in an order that differs
  // between workers; alone, there is nothing to sum.
  if (strategy_->num_replicas_in_sync() < 2 || !strategy_->overlaps_backward()) return;
  for (auto& r : replicas_)
    if (r->synchronizes()) return;
  const int64_t floats = replicas_[0]->buffers().gradients().numel();
  std::vector<GradientBucket> buckets =
      gradient_buckets(gradient_segments(*replicas_[0]), floats, strategy_->bucket_bytes() / 4);
  if (buckets.size() < 2) return;
  for (size_t b = 0; b < buckets.size(); ++b)
    bucket_names_.push_back("gradients (bucket " + std::to_string(b + 1) + " of " + std::to_string(buckets.size()) +
                            ")");
  progress_ = std::make_unique<BucketProgress>(std::move(buckets), num_replicas());
  for (size_t r = 0; r < replicas_.size(); ++r) replicas_[r]->set_bucket_progress(progress_.get(), static_cast<int>(r));
  if (strategy_->queues_all_reduce()) {
    queued_.resize(progress_->buckets().size());
    for (QueuedBucket& q : queued_)
      for (auto& r : replicas_) {
        q.ready.emplace_back(r->device());
        q.done.emplace_back(r->device());
        q.ready_events.push_back(q.ready.back().get());
        q.done_events.push_back(q.done.back().get());
      }
    // On the replica's thread, after it queued the kernels that write them.
    progress_->set_on_written([this](int r, size_t from, size_t to) {
      for (size_t b = from; b < to; ++b) queued_[b].ready[static_cast<size_t>(r)].record();
    });
  }
  // The caller's thread reduces the buckets: it is the one that may call MPI.
  threads_ = std::make_unique<ReplicaThreads>(num_replicas(), true);
}

int Model::all_reduce_buckets() const { return progress_ ? static_cast<int>(progress_->buckets().size()) : 1; }

void Model::on_replicas(const std::function<void(int)>& f, const std::function<void()>& alongside) {
  if (!threads_) {
    const auto t0 = Clock::now();
    f(0);
    times_[0].compute += seconds_since(t0);
    return;
  }
  if (alongside) {
    threads_->run(f, alongside);
  } else {
    threads_->run(f);
  }
  for (size_t r = 0; r < replicas_.size(); ++r) {
    times_[r].compute += threads_->busy_seconds()[r];
    times_[r].wait += threads_->wall_seconds() - threads_->busy_seconds()[r];
  }
}

void Model::step(const data::HostBatch& batch, bool update) {
  if (!replicas_[0]->compiled()) throw UsageError("the model " + name_ + " is not compiled: compile it first");
  check_batch(batch);
  const int64_t n = batch.size;
  if (collective_) collective_->reset(steps_ + 1);
  auto compute = [&](int r) {
    try {
      replicas_[static_cast<size_t>(r)]->compute_gradients(slice(batch, r), n);
    } catch (...) {
      // The others must not wait for this replica.
      if (collective_) collective_->abort();
      if (progress_) progress_->abort();
      throw;
    }
  };
  std::vector<Tensor*> grads;
  for (auto& r : replicas_) grads.push_back(&r->buffers().gradients());
  if (progress_) {
    overlapped_step(compute, grads);
  } else {
    on_replicas(compute);
    const auto t0 = Clock::now();
    strategy_->all_reduce(grads, "gradients", steps_ + 1);
    all_reduce_seconds_ += seconds_since(t0);
  }
  on_replicas([&](int r) { replicas_[static_cast<size_t>(r)]->apply_gradients(n, update); });
  if (update) ++steps_;
}

void Model::overlapped_step(const std::function<void(int)>& compute, const std::vector<Tensor*>& grads) {
  progress_->reset();
  const std::vector<GradientBucket>& buckets = progress_->buckets();
  std::vector<Tensor> views(grads.size());
  std::vector<Tensor*> parts(grads.size());
  double reducing = 0;
  Clock::time_point done;
  // Each bucket as soon as every local replica has written it, in order
  // (the order every worker follows).
  auto reduce = [&] {
    for (size_t b = 0; b < buckets.size(); ++b) {
      if (!progress_->wait(b)) return;  // a replica failed: its error is the one to report
      const GradientBucket& k = buckets[b];
      for (size_t r = 0; r < grads.size(); ++r) {
        views[r] = grads[r]->view(k.begin, {k.end - k.begin});
        parts[r] = &views[r];
      }
      const auto t0 = Clock::now();
      if (queued_.empty())
        strategy_->all_reduce(parts, bucket_names_[b], steps_ + 1);
      else
        strategy_->all_reduce_queued(parts, bucket_names_[b], steps_ + 1, queued_[b].ready_events,
                                     queued_[b].done_events);
      done = Clock::now();
      reducing += std::chrono::duration<double>(done - t0).count();
    }
  };
  on_replicas(compute, reduce);
  // Queued: the optimizer's kernels start once every bucket's sum is in.
  for (QueuedBucket& q : queued_)
    for (DeviceEvent& e : q.done) e.wait();
  // What backward did not hide: the reduction after the last replica finished
  // (queued on a device, only the time to queue it).
  const double exposed = std::max(0.0, std::chrono::duration<double>(done - progress_->finished_at()).count());
  all_reduce_seconds_ += exposed;
  all_reduce_hidden_seconds_ += std::max(0.0, reducing - exposed);
}

void Model::compute_gradients(const data::HostBatch& batch) {
  if (!built()) throw UsageError("the model " + name_ + " is not built: build it first");
  step(batch, false);
}

void Model::train_step(const data::HostBatch& batch) {
  if (!built()) throw UsageError("the model " + name_ + " is not built: build it first");
  step(batch, true);
}

PlacementPlan Model::plan_train_step(const data::HostBatch& batch) {
  if (!built() || !replicas_[0]->compiled()) throw UsageError("the model " + name_ + " is not compiled: compile it first");
  check_batch(batch);
  Replica& r = *replicas_[0];
  // Host-side counters a recorded step would still move.
  const int64_t iterations = r.optimizer().iterations();
  const int64_t samples = r.train_metrics().samples();
  PlacementPlan plan;
  {
    // Replica 0 on this thread only: the recorder is per thread, and the
    // other replicas would place the same ops on their own devices.
    DeviceScope scope(r.device());
    PlacementRecorder recorder;
    r.compute_gradients(slice(batch, 0), batch.size);
    r.apply_gradients(batch.size, true);
    plan.ops = recorder.ops();
    plan.missing = recorder.missing();
    plan.fusions = describe_fusions(r.plan());
  }
  r.optimizer().set_iterations(iterations);
  r.train_metrics().set_samples(samples);
  return plan;
}

const Tensor& Model::per_sample_loss(int64_t batch_size) const {
  if (!built()) throw RuntimeError("the model " + name_ + " is not built");
  return replicas_[0]->per_sample_loss(batch_size);
}

Tensor Model::forward(const data::HostBatch& batch) {
  if (!built()) throw UsageError("the model " + name_ + " is not built: build it first");
  check_batch(batch);
  return replicas_[0]->forward({batch.images.data(), batch.labels.data(), batch.size, batch.format});
}

History Model::fit(const data::SampleSource& train, const FitOptions& o) {
  if (!built() || !replicas_[0]->compiled()) throw UsageError("the model " + name_ + " is not compiled: compile it first");
  if (o.epochs <= 0) throw UsageError("epochs must be positive, got " + std::to_string(o.epochs));
  strategy_->check_global_batch(o.batch_size);
  check_set(train, "training");
  if (o.validation_data != nullptr) check_set(*o.validation_data, "validation");
  data::BatchPipeline pipeline(train, o.batch_size, o.shuffle, o.seed, o.prefetch);
  const int64_t steps = o.steps_per_epoch > 0 ? std::min(o.steps_per_epoch, pipeline.steps()) : pipeline.steps();
  const std::function<MetricValues()> read = [this] {
    MetricValues m = metrics().read();
    m.learning_rate = optimizer().learning_rate();
    return m;
  };

  if (o.initial_epoch < 0 || o.initial_step < 0 || o.initial_step >= std::max<int64_t>(steps, 1))
    throw UsageError("fit: cannot resume at step " + std::to_string(o.initial_step) + " of epoch " +
                     std::to_string(o.initial_epoch + 1) + " (" + std::to_string(steps) + " steps per epoch)");
  // Under multi-worker a stop must be agreed, at steps every worker polls.
  const bool agree = strategy_->num_workers() > 1;
  auto stop_now = [&](int64_t s) {
    if (!o.stop_requested) return false;
    if (!agree) return o.stop_requested();
    return s % kStopPollSteps == 0 && strategy_->any_worker(o.stop_requested(), "stop request", steps_ + 1);
  };

  History history;
  auto callbacks_stop = [&] {
    return std::any_of(o.callbacks.begin(), o.callbacks.end(), [](Callback* cb) { return cb->stop_training(); });
  };
  for (int epoch = o.initial_epoch + 1; epoch <= o.epochs; ++epoch) {
    if (callbacks_stop()) break;  // stopped before this fit (a run resumed after EarlyStopping)
    const int64_t first = epoch == o.initial_epoch + 1 ? o.initial_step : 0;
    for (Callback* cb : o.callbacks) cb->on_epoch_begin(epoch, o.epochs, steps);
    const auto t0 = Clock::now();
    const double wait0 = pipeline.wait_seconds();
    for (ReplicaTimes& t : times_) t.compute = t.wait = 0;
    all_reduce_seconds_ = all_reduce_hidden_seconds_ = 0;
    // A resumed epoch keeps the totals its checkpoint restored.
    if (first == 0)
      for (auto& r : replicas_) r->train_metrics().reset();
    pipeline.begin_epoch(epoch - 1, first);
    for (int64_t s = first; s < steps; ++s) {
      if (stop_now(s)) {
        history.stopped = true;
        history.stopped_epoch = epoch;
        history.stopped_step = s;
        return history;
      }
      if (o.learning_rate_schedule != nullptr)
        set_learning_rate((*o.learning_rate_schedule)(optimizer().iterations()));
      step(pipeline.next(), true);
      for (Callback* cb : o.callbacks) cb->on_batch_end(s, read);
    }
    EpochLogs logs;
    const MetricValues m = metrics().read();  // the epoch's one unconditional sync
    logs.seconds = seconds_since(t0);
    logs.input_wait_seconds = pipeline.wait_seconds() - wait0;
    logs.all_reduce_seconds = all_reduce_seconds_;
    logs.all_reduce_hidden_seconds = all_reduce_hidden_seconds_;
    logs.replicas = times_;
    logs.epoch = epoch;
    logs.epochs = o.epochs;
    logs.steps = steps;
    logs.samples = m.samples;
    logs.loss = m.loss;
    logs.accuracy = m.accuracy;
    logs.metrics = m.metrics;
    logs.learning_rate = optimizer().learning_rate();
    if (o.validation_data != nullptr) {
      const auto t1 = Clock::now();
      const MetricValues v = evaluate(*o.validation_data, o.batch_size);
      logs.validation_seconds = seconds_since(t1);
      logs.has_validation = true;
      logs.val_loss = v.loss;
      logs.val_accuracy = v.accuracy;
      logs.val_metrics = v.metrics;
    }
    history.epochs.push_back(logs);
    for (Callback* cb : o.callbacks) cb->on_epoch_end(logs);
    if (callbacks_stop() && epoch < o.epochs) {
      history.early_stopped_epoch = epoch;
      break;
    }
  }
  for (Callback* cb : o.callbacks) cb->on_train_end(history);
  return history;
}

MetricValues Model::evaluate(const data::SampleSource& set, int64_t batch_size) {
  if (!built() || !replicas_[0]->compiled()) throw UsageError("the model " + name_ + " is not compiled: compile it first");
  check_set(set, "evaluation");
  data::BatchPipeline pipeline(set, batch_size, false, 0, true);
  pipeline.begin_epoch(0);
  for (auto& r : replicas_) r->eval_metrics().reset();
  for (int64_t s = 0; s < pipeline.steps(); ++s) {
    const data::HostBatch& batch = pipeline.next();
    check_batch(batch);
    on_replicas([&](int r) {
      const Samples part = slice(batch, r);
      if (part.count > 0) replicas_[static_cast<size_t>(r)]->evaluate(part);
    });
  }
  // Each replica holds the sums of its own samples; add them up.
  std::vector<Tensor*> totals;
  for (auto& r : replicas_) totals.push_back(&r->eval_metrics().totals());
  strategy_->all_reduce(totals, "validation metrics", steps_);
  DeviceMetrics& m = replicas_[0]->eval_metrics();
  m.set_samples(set.size());
  return m.read();
}

std::vector<float> Model::predict(const data::SampleSource& set, int64_t batch_size) {
  check_set(set, "prediction");
  data::BatchPipeline pipeline(set, batch_size, false, 0, true);
  pipeline.begin_epoch(0);
  const int64_t classes = layers().back()->output_shape()[0];
  std::vector<float> out(static_cast<size_t>(set.size() * classes));
  for (int64_t s = 0; s < pipeline.steps(); ++s) {
    const Tensor logits = forward(pipeline.next());
    logits.copy_to_host(out.data() + s * batch_size * classes, logits.bytes());
  }
  return out;
}

std::string Model::summary() { return summary(input_shape_); }

std::string Model::summary(const Shape& images) {
  const Shape input_shape = graph_input(images);
  const std::vector<Layer*> ls = layers();
  const std::vector<Shape> shapes = output_shapes(ls, graph_.inputs, input_shape);
  const bool chain = is_chain();
  auto shape_text = [](const Shape& sh) {
    std::string t = "(None";
    for (int64_t d : sh) t += ", " + std::to_string(d);
    return t + ")";
  };
  // Keras 2's table, its columns widened to the longest entry; a "Connected
  // to" column for a graph, not for a chain.
  size_t name_w = 27, shape_w = 25;
  for (size_t i = 0; i < ls.size(); ++i) {
    name_w = std::max(name_w, ls[i]->name().size() + std::strlen(ls[i]->type()) + 4);
    shape_w = std::max(shape_w, shape_text(shapes[i]).size() + 1);
  }
  const size_t width = name_w + shape_w + (chain ? 13 : 45);
  const std::string rule(width, '_'), thick(width, '=');
  std::string s = "Model: \"" + name_ + "\"\n" + rule + "\n";
  auto cell = [&](const std::string& t, size_t w) {
    s.append(t);
    s.append(t.size() < w ? w - t.size() : 1, ' ');
  };
  auto row = [&](const std::string& layer, const std::string& shape, const std::string& params, const std::string& from) {
    s.append(" ");
    cell(layer, name_w);
    cell(shape, shape_w);
    if (chain) {
      s.append(params);
    } else {
      cell(params, 11);
      s.append(from);
    }
    s.append("\n");
  };
  row("Layer (type)", "Output Shape", "Param #", "Connected to");
  s += thick + "\n";
  int64_t total = 0, trainable = 0;
  if (!chain) {
    row("input_layer (InputLayer)", shape_text(input_shape), "0", "[]");
    s += "\n";
  }
  for (size_t i = 0; i < ls.size(); ++i) {
    int64_t params = 0, train = 0;
    std::vector<Shape> in;
    for (int j : node_inputs(static_cast<int>(i))) in.push_back(j == kModelInput ? input_shape : shapes[static_cast<size_t>(j)]);
    for (const WeightSpec& w : ls[i]->weight_specs(in)) {
      params += numel(w.shape);
      if (w.trainable) train += numel(w.shape);
    }
    total += params;
    trainable += train;
    std::string from;
    for (int j : node_inputs(static_cast<int>(i)))
      from += (from.empty() ? "" : ", ") + (j == kModelInput ? std::string("input_layer") : ls[static_cast<size_t>(j)]->name());
    row(ls[i]->name() + " (" + ls[i]->type() + ")", shape_text(shapes[i]), with_commas(params), "[" + from + "]");
    if (i + 1 < ls.size()) s += "\n";
  }
  s += thick + "\nTotal params: " + with_commas(total) + "\nTrainable params: " + with_commas(trainable) +
       "\nNon-trainable params: " + with_commas(total - trainable) + "\n" + rule + "\n";
  return s;
}

std::unique_ptr<Sequential> make_cnn(int classes) {
  auto m = std::make_unique<Sequential>();
  m->add<Conv2D>(32, 3, Activation::relu);
  m->add<MaxPooling2D>(2);
  m->add<Conv2D>(64, 3, Activation::relu);
  m->add<MaxPooling2D>(2);
  m->add<Conv2D>(64, 3, Activation::relu);
  m->add<Flatten>();
  m->add<Dense>(64, Activation::relu);
  m->add<Dense>(classes);
  return m;
}

}  // namespace axon::nn
