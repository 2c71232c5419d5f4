// A replica's step: upload the uint8 samples and labels, NormalizeImage, each
// layer's forward, the loss and its gradient, the metric sums, each layer's
// backward in reverse into the flat gradient buffer; after the all-reduce,
// the metric totals and one ApplyAdam over all parameters. Nothing is
// allocated after the first step of each batch size.
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/replica.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
// The two floats after the parameters in the gradient buffer.
constexpr int64_t kMetricSums = 2;
}  // namespace

Replica::Replica(std::vector<std::unique_ptr<Layer>> layers, const Shape& input_shape, Device& device, Rng& rng)
    : device_(&device), input_shape_(input_shape), layers_(std::move(layers)) {
  DeviceScope scope(device);
  Shape s = input_shape;
  for (auto& l : layers_) s = l->build(s, device, rng);
  if (s.size() != 1) throw UsageError("Sequential: the last layer must output [classes], got " + shape_string(s));
  buffers_.bind(parameters(), device, kMetricSums);
  layer_inputs_.assign(layers_.size(), nullptr);
  pool_after_.assign(layers_.size(), nullptr);
  pooled_.assign(layers_.size(), 0);
  for (size_t i = 0; i + 1 < layers_.size(); ++i)
    if (dynamic_cast<Conv2D*>(layers_[i].get()) != nullptr)
      pool_after_[i] = dynamic_cast<MaxPooling2D*>(layers_[i + 1].get());
  train_metrics_.build(device);
  eval_metrics_.build(device);
  eval_sums_ = zeros(device, {kMetricSums});
}

std::vector<Layer*> Replica::layers() {
  std::vector<Layer*> v;
  for (auto& l : layers_) v.push_back(l.get());
  return v;
}

std::vector<Parameter*> Replica::parameters() {
  std::vector<Parameter*> v;
  for (auto& l : layers_)
    for (Parameter* p : l->parameters()) v.push_back(p);
  return v;
}

void Replica::compile(const AdamOptions& optimizer, const SparseCategoricalCrossentropy& loss) {
  DeviceScope scope(*device_);
  optimizer_.emplace(optimizer);
  optimizer_->build(buffers_);
  loss_.emplace(loss);
}

const Adam& Replica::optimizer() const {
  if (!optimizer_) throw RuntimeError("the model is not compiled");
  return *optimizer_;
}

Adam& Replica::optimizer() {
  if (!optimizer_) throw RuntimeError("the model is not compiled");
  return *optimizer_;
}

Replica::Inputs& Replica::upload(const Samples& s) {
  const int64_t n = s.count;
  auto it = inputs_.find(n);
  if (it == inputs_.end()) {
    Shape shape{n};
    shape.insert(shape.end(), input_shape_.begin(), input_shape_.end());
    it = inputs_.emplace(n, Inputs{Tensor(*device_, AXON_UINT8, shape), Tensor(*device_, AXON_FLOAT32, shape),
                                   Tensor(*device_, AXON_INT32, {n})}).first;
  }
  Inputs& in = it->second;
  in.pixels.copy_from_host(s.images, in.pixels.bytes());
  in.labels.copy_from_host(s.labels, in.labels.bytes());
  ops::normalize_image(in.pixels, in.images, "input");
  return in;
}

const Tensor& Replica::forward(const Samples& s, bool training) {
  DeviceScope scope(*device_);
  for (auto& l : layers_) l->set_training(training);
  Inputs& in = upload(s);
  const Tensor* h = &in.images;
  for (size_t i = 0; i < layers_.size(); ++i) {
    layer_inputs_[i] = h;
    pooled_[i] = 0;
    if (MaxPooling2D* pool = pool_after_[i]) {
      if (const Tensor* y = static_cast<Conv2D&>(*layers_[i]).forward_pooled(*h, *pool)) {
        pooled_[i] = 1;
        layer_inputs_[++i] = nullptr;  // the conv output never exists
        h = y;
        continue;
      }
    }
    h = &layers_[i]->forward(*h);
  }
  return *h;
}

void Replica::compute_gradients(const Samples& s, int64_t global_batch) {
  if (!loss_) throw UsageError("Sequential: compile the model first");
  DeviceScope scope(*device_);
  if (s.count == 0) {  // a short last batch left this replica nothing
    ops::fill(buffers_.gradients(), 0.0f, "replica");
    return;
  }
  const Tensor& logits = forward(s, true);
  const Tensor& labels = inputs_.at(s.count).labels;
  loss_->forward_backward(logits, labels, global_batch);
  train_metrics_.batch_sums(loss_->per_sample_loss(s.count), logits, labels, buffers_.extra());
  const Tensor* g = &loss_->gradient(s.count);
  for (size_t i = layers_.size(); i-- > 0;) {
    if (i > 0 && pooled_[i - 1]) {  // layer i is the pool of a fused pair
      --i;
      g = &static_cast<Conv2D&>(*layers_[i]).backward_pooled(*layer_inputs_[i], *g, *pool_after_[i], i > 0);
      continue;
    }
    g = &layers_[i]->backward(*layer_inputs_[i], *g, i > 0);
  }
}

void Replica::apply_gradients(int64_t global_samples, bool update) {
  DeviceScope scope(*device_);
  train_metrics_.accumulate(buffers_.extra(), global_samples);
  if (update) optimizer_->apply(buffers_);
}

void Replica::evaluate(const Samples& s) {
  if (!loss_) throw UsageError("Sequential::evaluate: compile the model first");
  DeviceScope scope(*device_);
  const Tensor& logits = forward(s);
  const Tensor& labels = inputs_.at(s.count).labels;
  // The loss kernel also writes dlogits; harmless, and keeps one op set.
  loss_->forward_backward(logits, labels);
  eval_metrics_.batch_sums(loss_->per_sample_loss(s.count), logits, labels, eval_sums_);
  eval_metrics_.accumulate(eval_sums_, s.count);
}

const Tensor& Replica::per_sample_loss(int64_t count) const {
  if (!loss_) throw RuntimeError("the model is not compiled");
  return loss_->per_sample_loss(count);
}

}  // namespace axon::nn
