// A replica's step: upload the samples and labels (uint8 pixels through NormalizeImage), the
// plan's forward in node order, the loss and its gradient, the metric sums,
// the plan's backward in reverse into the flat gradient buffer; after the
// all-reduce, the metric totals and one optimizer update over all parameters.
// Activations and gradients come from the replica's pool: nothing is
// allocated on the device after the first step of each batch size.
#include "fusion.hpp"
#include "gradient_buckets.hpp"
#include "step_collective.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/replica.hpp>
#include <axon/ops.hpp>
#include <axon/placement_plan.hpp>

#include <algorithm>

namespace axon::nn {
namespace {
// The floats after the parameters in the gradient buffer: the loss sum, the
// correct count and room for the compiled metrics' sums.
constexpr int64_t kMetricSums = 2 + kMaxMetrics;
}  // namespace

std::vector<Shape> output_shapes(const std::vector<Layer*>& layers, const std::vector<std::vector<int>>& inputs,
                                 const Shape& input_shape) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < layers.size(); ++i) {
    std::vector<Shape> in;
    for (int j : inputs.at(i)) in.push_back(j == kModelInput ? input_shape : shapes.at(static_cast<size_t>(j)));
    try {
      shapes.push_back(layers[i]->output_shape(in));
    } catch (const UsageError& e) {
      throw UsageError("layer " + layers[i]->name() + " (" + layers[i]->type() + "): " + e.what());
    }
  }
  return shapes;
}

Replica::Replica(Graph graph, const Shape& input_shape, Device& device, Rng& rng)
    : device_(&device), input_shape_(input_shape), graph_(std::move(graph)), pool_(device) {
  DeviceScope scope(device);
  const size_t n = graph_.layers.size();
  if (n == 0 || graph_.inputs.size() != n) throw UsageError("the model has no layers");
  const Shape& graph_input = graph_.input.empty() ? input_shape : graph_.input;
  if (numel(graph_input) != numel(input_shape))
    throw UsageError("the model's input " + shape_string(graph_input) + " does not hold images " + shape_string(input_shape));
  std::vector<Shape> shapes(n);
  needs_grad_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    Layer& l = *graph_.layers[i];
    std::vector<Shape> in;
    bool grad = false;
    for (int j : graph_.inputs[i]) {
      if (j >= static_cast<int>(i) || j < kModelInput) throw RuntimeError("the model's graph is not in topological order");
      in.push_back(j == kModelInput ? graph_input : shapes[static_cast<size_t>(j)]);
      grad = grad || needs_grad(j);
    }
    if (grad && l.augments())
      throw UsageError(l.type() + std::string(" '") + l.name() +
                       "' follows a layer with weights: axon augments the model's input only (no gradient flows "
                       "through augmentation); put it before the first layer with weights");
    l.build(in, device, rng, pool_);
    shapes[i] = l.output_shape();
    needs_grad_[i] = grad || l.parameter_count(true) > 0;
    l.set_backprop(needs_grad_[i] != 0);
  }
  if (shapes.back().size() != 1)
    throw UsageError("the model's output must be [classes] per sample, got " + shape_string(shapes.back()) +
                     " (a Flatten or a global pooling before the last Dense)");
  for (auto& l : graph_.layers) {
    l->set_step_context(&step_);
    synchronizes_ = synchronizes_ || l->synchronizes();
    regularized_.push_back(l->regularized_weights());
    any_regularized_ = any_regularized_ || !regularized_.back().empty();
  }
  // The input goes up as raw pixels when every path from it reaches a layer
  // that scales pixels itself, through augmentation layers only.
  std::vector<char> scaled(n, 0);
  for (size_t i = n; i-- > 0;) {
    const Layer& l = *graph_.layers[i];
    bool readers_scaled = l.augments(), read = false;
    for (size_t k = i + 1; k < n; ++k)
      for (int j : graph_.inputs[k])
        if (j == static_cast<int>(i)) read = true, readers_scaled = readers_scaled && scaled[k];
    scaled[i] = l.scales_pixels() || (read && readers_scaled);
  }
  raw_pixels_ = true;
  for (size_t i = 0; i < n; ++i)
    for (int j : graph_.inputs[i])
      if (j == kModelInput && !scaled[i]) raw_pixels_ = false;
  buffers_.bind(parameters(), device, kMetricSums);
  // Until compile says otherwise (Replica::compile), a softmax output gives
  // its logits, as the default loss reads them.
  Layer& out = *graph_.layers.back();
  if (out.ends_in_softmax()) out.set_output_logits(true);
  plan_ = plan_steps(graph_, pool_);
  for (const std::string& f : describe_fusions(plan_)) log_placement_note("Fusing " + f + " where the device has them");
  readers_.assign(n, 0);
  for (PlanStep& s : plan_) {
    s.backprop = needs_grad_[static_cast<size_t>(s.output)] != 0;
    if (s.fused) s.fused->set_backprop(s.backprop);
    for (int j : s.inputs)
      if (j >= 0) ++readers_[static_cast<size_t>(j)];
  }
  outputs_.resize(n);
  grads_.resize(n);
  size_t widest = 0;
  for (const PlanStep& step : plan_) widest = std::max(widest, step.inputs.size());
  need_ = std::make_unique<bool[]>(widest);
  train_metrics_.build(device);
  eval_metrics_.build(device);
  eval_sums_ = zeros(device, {train_metrics_.sums_size()});
}

std::vector<Layer*> Replica::layers() {
  std::vector<Layer*> v;
  for (auto& l : graph_.layers) v.push_back(l.get());
  return v;
}

std::vector<Parameter*> Replica::parameters() {
  std::vector<Parameter*> v;
  for (auto& l : graph_.layers)
    for (Parameter* p : l->parameters()) v.push_back(p);
  return v;
}

void Replica::set_collective(StepCollective* collective, int index) {
  step_.collective = collective;
  step_.index = index;
}

void Replica::set_bucket_progress(BucketProgress* progress, int index) {
  progress_ = progress;
  progress_index_ = index;
}

void Replica::Step::all_reduce(Tensor& t, const std::string& what) {
  // One replica, or a step only recorded (--dry-run): nothing to sum.
  if (collective == nullptr || PlacementRecorder::current() != nullptr) return;
  collective->all_reduce(index, t, what);
}

void Replica::join_without_samples() {
  for (const PlanStep& s : plan_) s.layer->join_without_samples(true);
  for (size_t k = plan_.size(); k-- > 0;)
    if (plan_[k].backprop) plan_[k].layer->join_without_samples(false);
}

void Replica::compile(const OptimizerOptions& optimizer, const LossOptions& loss,
                      const std::vector<MetricOptions>& metrics) {
  DeviceScope scope(*device_);
  std::unique_ptr<Loss> l = make_loss(loss);
  // A softmax (sigmoid) output gives its logits to a categorical (binary)
  // cross-entropy, which applies the softmax (sigmoid) itself.
  Layer& out = *graph_.layers.back();
  const int64_t units = out.output_shape().back();
  const bool logits = l->bind_output(out.output_activation(), units);
  out.set_output_logits(logits);
  const bool binary = l->accuracy(units) == AccuracyKind::binary;
  // Keras computes the metrics on what the model outputs: the activation the
  // loss took over is applied to the logits again where a metric needs it.
  const Activation left_to_loss = logits ? out.output_activation() : Activation::linear;
  for (DeviceMetrics* m : {&train_metrics_, &eval_metrics_}) {
    m->set_accuracy(binary, l->binary_threshold());
    m->set_metrics(metrics, left_to_loss);
  }
  eval_sums_ = zeros(*device_, {eval_metrics_.sums_size()});
  optimizer_ = make_optimizer(optimizer);
  optimizer_->build(buffers_);
  loss_ = std::move(l);
}

const Loss& Replica::loss() const {
  if (!loss_) throw RuntimeError("the model is not compiled");
  return *loss_;
}

const Optimizer& Replica::optimizer() const {
  if (!optimizer_) throw RuntimeError("the model is not compiled");
  return *optimizer_;
}

Optimizer& Replica::optimizer() {
  if (!optimizer_) throw RuntimeError("the model is not compiled");
  return *optimizer_;
}

Replica::Inputs& Replica::upload(const Samples& s) {
  const int64_t n = s.count;
  auto it = inputs_.find(n);
  if (it == inputs_.end()) {
    Shape shape{n};
    shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
    it = inputs_.emplace(n, Inputs{Tensor(), Tensor(*device_, AXON_FLOAT32, shape), Tensor(*device_, AXON_INT32, {n})})
             .first;
  }
  Inputs& in = it->second;
  in.labels.copy_from_host(s.labels, in.labels.bytes());
  if (s.format != data::PixelFormat::kUint8) {
    // Float pixels go up as they are; those on the 0..255 scale (a resized
    // image) are scaled as uint8 pixels would be.
    in.images.copy_from_host(s.images, in.images.bytes());
    if (s.format == data::PixelFormat::kFloat255 && !raw_pixels_)
      ops::scale(in.images, in.images, 1.0f / 255.0f, "input");
    return in;
  }
  if (!in.pixels.defined()) in.pixels = Tensor(*device_, AXON_UINT8, in.images.shape());
  in.pixels.copy_from_host(s.images, in.pixels.bytes());
  ops::normalize_image(in.pixels, in.images, "input");
  // x / 255 * 255 gives back every uint8 exactly in float32.
  if (raw_pixels_) ops::scale(in.images, in.images, 255.0f, "input");
  return in;
}

Tensor Replica::forward(const Samples& s, bool training) {
  DeviceScope scope(*device_);
  PoolScope scratch(pool_);
  for (auto& l : graph_.layers) l->set_training(training);
  for (PlanStep& step : plan_)
    if (step.fused) step.fused->set_training(training);
  const Inputs& in = upload(s);
  // Keras' Input((H, W)): the one-channel images without their channel axis.
  Tensor images = in.images;
  if (!graph_.input.empty()) {
    Shape shape{images.dim(0)};
    shape.insert(shape.end(), graph_.input.begin(), graph_.input.end());
    images = images.reshaped(std::move(shape));
  }
  left_ = readers_;
  std::vector<Tensor> x;
  for (const PlanStep& step : plan_) {
    x.clear();
    for (int j : step.inputs) x.push_back(j == kModelInput ? images : outputs_[static_cast<size_t>(j)]);
    outputs_[static_cast<size_t>(step.output)] = step.layer->forward(x);
    // An output nothing later reads is let go now (the layers keep what
    // their backward needs).
    for (int j : step.inputs)
      if (j >= 0 && --left_[static_cast<size_t>(j)] == 0) outputs_[static_cast<size_t>(j)] = Tensor();
  }
  Tensor logits = std::move(outputs_.back());
  outputs_.back() = Tensor();
  return logits;
}

void Replica::accumulate(int node, const Tensor& g) {
  Tensor& sum = grads_[static_cast<size_t>(node)];
  if (!sum.defined()) {
    sum = g;
    return;
  }
  // A node read by several layers: its gradient is the sum of theirs.
  Tensor total = pool_.take(g.dtype(), g.shape());
  ops::add_n({&sum, &g}, total, graph_.layers[static_cast<size_t>(node)]->name());
  sum = std::move(total);
}

void Replica::hand_over(const PlanStep& step, size_t i, Tensor& dx) {
  const int node = step.inputs[i];
  if (node < 0 || std::count(step.inputs.begin(), step.inputs.end(), node) != 1) return;
  Tensor& sum = grads_[static_cast<size_t>(node)];
  // The layer adds its part into the sum so far, in place: only where no
  // other tensor shares the sum's buffer (an Add passes one dy to both its
  // inputs).
  if (sum.defined() && sum.sole_handle()) dx = std::move(sum);
}

void Replica::backward(const Tensor& dlogits) {
  PoolScope scratch(pool_);
  grads_.back() = dlogits;
  std::vector<Tensor> dx;
  for (size_t k = plan_.size(); k-- > 0;) {
    PlanStep& step = plan_[k];
    Tensor dy = std::move(grads_[static_cast<size_t>(step.output)]);
    grads_[static_cast<size_t>(step.output)] = Tensor();
    if (!step.backprop) continue;
    const size_t n_in = step.inputs.size();
    for (size_t i = 0; i < n_in; ++i) need_[i] = needs_grad(step.inputs[i]);
    dx.assign(n_in, Tensor());
    if (step.layer->adds_into_dx())
      for (size_t i = 0; i < n_in; ++i)
        if (need_[i]) hand_over(step, i, dx[i]);
    step.layer->backward(dy, std::span<const bool>(need_.get(), n_in), dx);
    if (any_regularized_) add_penalty_gradients(step);
    for (size_t i = 0; i < n_in; ++i)
      if (need_[i]) accumulate(step.inputs[i], dx[i]);
    if (progress_ != nullptr) progress_->backward_ran(progress_index_, k);
  }
}

void Replica::compute_gradients(const Samples& s, int64_t global_batch) {
  if (!loss_) throw UsageError("the model is not compiled: compile it first");
  DeviceScope scope(*device_);
  step_.global_samples_ = global_batch;
  step_.step_index_ = optimizer_->iterations();
  step_.first_sample_ = s.offset;
  if (s.count == 0) {  // a short last batch left this replica nothing
    ops::fill(buffers_.gradients(), 0.0f, "replica");
    if (synchronizes_) join_without_samples();
    if (progress_ != nullptr) progress_->finished(progress_index_);
    return;
  }
  const Tensor logits = forward(s, true);
  const Tensor& labels = inputs_.at(s.count).labels;
  loss_->forward_backward(logits, labels, global_batch);
  Tensor sums = metric_sums();
  train_metrics_.batch_sums(loss_->per_sample_loss(s.count), logits, labels, sums);
  if (any_regularized_) {
    Tensor loss_sum = sums.view(0, {1});
    add_penalties(loss_sum, s.count);
  }
  batch_share_ = static_cast<double>(s.count) / static_cast<double>(global_batch);
  backward(loss_->gradient(s.count));
  if (progress_ != nullptr) progress_->finished(progress_index_);
}

void Replica::apply_gradients(int64_t global_samples, bool update) {
  DeviceScope scope(*device_);
  train_metrics_.accumulate(metric_sums(), global_samples);
  if (update) optimizer_->apply(buffers_);
}

void Replica::evaluate(const Samples& s) {
  if (!loss_) throw UsageError("the model is not compiled: compile it first");
  DeviceScope scope(*device_);
  const Tensor logits = forward(s);
  const Tensor& labels = inputs_.at(s.count).labels;
  // The loss kernel also writes dlogits; harmless, and keeps one op set.
  loss_->forward_backward(logits, labels);
  eval_metrics_.batch_sums(loss_->per_sample_loss(s.count), logits, labels, eval_sums_);
  if (any_regularized_) {
    Tensor loss_sum = eval_sums_.view(0, {1});
    add_penalties(loss_sum, s.count);
  }
  eval_metrics_.accumulate(eval_sums_, s.count);
}

void Replica::add_penalties(Tensor& loss_sum, int64_t samples) {
  PoolScope scratch(pool_);
  // loss_sum += factor * samples * sum(terms)
  auto add_term = [&](const Tensor& terms, double factor) {
    Tensor sum = pool_.take(AXON_FLOAT32, {1}), total = pool_.take(AXON_FLOAT32, {1});
    ops::sum(terms, sum, "regularizers");
    ops::scale(sum, sum, static_cast<float>(factor * static_cast<double>(samples)), "regularizers");
    ops::add_n({&loss_sum, &sum}, total, "regularizers");
    ops::identity(total, loss_sum, "regularizers");
  };
  for (const auto& weights : regularized_)
    for (const auto& [p, r] : weights) {
      const Tensor& w = p->value;
      if (r.l1 != 0) {  // |w| = max(w, -w)
        Tensor negated = pool_.take(AXON_FLOAT32, w.shape()), magnitudes = pool_.take(AXON_FLOAT32, w.shape());
        ops::scale(w, negated, -1.0f, "regularizers");
        ops::maximum(w, negated, magnitudes, "regularizers");
        add_term(magnitudes, r.l1);
      }
      if (r.l2 != 0) {
        Tensor squares = pool_.take(AXON_FLOAT32, w.shape());
        ops::mul(w, w, squares, "regularizers");
        add_term(squares, r.l2);
      }
    }
}

void Replica::add_penalty_gradients(const PlanStep& step) {
  // grad += term
  auto add_term = [&](Parameter& p, const Tensor& term) {
    Tensor total = pool_.take(AXON_FLOAT32, p.value.shape());
    ops::add_n({&p.grad, &term}, total, "regularizers");
    ops::identity(total, p.grad, "regularizers");
  };
  for (int node = step.first; node <= step.output; ++node)
    for (const auto& [p, r] : regularized_[static_cast<size_t>(node)]) {
      const Tensor& w = p->value;
      if (r.l1 != 0) {
        // c sign(w) = c where w > 0, minus c where -w > 0 (0 at 0, as
        // TensorFlow's gradient of abs): ReluGrad of a tensor of c.
        const Shape& shape = w.shape();
        Tensor c = pool_.take(AXON_FLOAT32, shape), negated = pool_.take(AXON_FLOAT32, shape),
               above = pool_.take(AXON_FLOAT32, shape), below = pool_.take(AXON_FLOAT32, shape),
               term = pool_.take(AXON_FLOAT32, shape);
        ops::fill(c, static_cast<float>(r.l1 * batch_share_), "regularizers");
        ops::scale(w, negated, -1.0f, "regularizers");
        ops::relu_grad(c, w, above, "regularizers");
        ops::relu_grad(c, negated, below, "regularizers");
        ops::sub(above, below, term, "regularizers");
        add_term(*p, term);
      }
      if (r.l2 != 0) {
        Tensor term = pool_.take(AXON_FLOAT32, w.shape());
        ops::scale(w, term, static_cast<float>(2.0 * r.l2 * batch_share_), "regularizers");
        add_term(*p, term);
      }
    }
}

Tensor Replica::metric_sums() { return buffers_.extra().view(0, {train_metrics_.sums_size()}); }

const Tensor& Replica::per_sample_loss(int64_t count) const {
  if (!loss_) throw RuntimeError("the model is not compiled");
  return loss_->per_sample_loss(count);
}

}  // namespace axon::nn
