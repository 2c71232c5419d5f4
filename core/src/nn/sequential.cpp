// Sequential: the training loop. Per step: upload the uint8 batch and its
// labels, NormalizeImage, each layer's forward, the loss and its gradient,
// device-side metric sums, each layer's backward in reverse, one Adam update.
// Nothing is allocated after the first step of each batch size, and nothing
// is read back to the host unless a callback asks for the metrics.
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/sequential.hpp>
#include <axon/ops.hpp>

#include <chrono>
#include <cstdio>

namespace axon::nn {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

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

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
  if (built()) throw UsageError("Sequential::add: the model " + name_ + " is already built");
  int& count = name_counts_[layer->name()];
  if (count > 0) layer->set_name(layer->name() + "_" + std::to_string(count));
  ++count;
  layers_.push_back(std::move(layer));
  return *this;
}

void Sequential::build(const Shape& input_shape, const Strategy& strategy, uint64_t seed) {
  if (strategy.num_replicas() != 1 || strategy.num_workers() != 1)
    throw UsageError("strategy " + strategy.name() + " has " + std::to_string(strategy.num_replicas()) +
                     " replicas; this model supports one replica for now");
  build(input_shape, *strategy.replica_devices().front(), seed);
}

void Sequential::build(const Shape& input_shape, Device& device, uint64_t seed) {
  if (built()) throw UsageError("Sequential::build: the model " + name_ + " is already built");
  if (layers_.empty()) throw UsageError("Sequential::build: the model " + name_ + " has no layers");
  if (input_shape.size() != 3) throw UsageError("Sequential: the input shape must be [height, width, channels]");
  DeviceScope scope(device);
  Rng rng(seed);
  Shape s = input_shape;
  for (auto& l : layers_) s = l->build(s, device, rng);
  if (s.size() != 1) throw UsageError("Sequential: the last layer must output [classes], got " + shape_string(s));
  input_shape_ = input_shape;
  device_ = &device;
  layer_inputs_.assign(layers_.size(), nullptr);
  pool_after_.assign(layers_.size(), nullptr);
  pooled_.assign(layers_.size(), 0);
  for (size_t i = 0; i + 1 < layers_.size(); ++i)
    if (dynamic_cast<Conv2D*>(layers_[i].get()) != nullptr)
      pool_after_[i] = dynamic_cast<MaxPooling2D*>(layers_[i + 1].get());
  train_metrics_.build(device);
  eval_metrics_.build(device);
}

void Sequential::compile(const AdamOptions& optimizer, SparseCategoricalCrossentropy loss) {
  if (!built()) throw UsageError("Sequential::compile: build the model first");
  DeviceScope scope(*device_);
  optimizer_.emplace(optimizer);
  params_ = parameters();
  optimizer_->build(params_);
  loss_.emplace(std::move(loss));
}

Device& Sequential::device() const {
  if (device_ == nullptr) throw RuntimeError("the model " + name_ + " is not built");
  return *device_;
}

const Adam& Sequential::optimizer() const {
  if (!optimizer_) throw RuntimeError("the model " + name_ + " is not compiled");
  return *optimizer_;
}

std::vector<Layer*> Sequential::layers() {
  std::vector<Layer*> v;
  for (auto& l : layers_) v.push_back(l.get());
  return v;
}

std::vector<Parameter*> Sequential::parameters() {
  std::vector<Parameter*> v;
  for (auto& l : layers_)
    for (Parameter* p : l->parameters()) v.push_back(p);
  return v;
}

int64_t Sequential::parameter_count() {
  int64_t n = 0;
  for (auto& l : layers_) n += l->parameter_count();
  return n;
}

int64_t Sequential::training_flops_per_sample() const {
  int64_t f = 0;
  for (size_t i = 0; i < layers_.size(); ++i) f += layers_[i]->forward_flops() + layers_[i]->backward_flops(i > 0);
  return f;
}

int64_t Sequential::inference_flops_per_sample() const {
  int64_t f = 0;
  for (const auto& l : layers_) f += l->forward_flops();
  return f;
}

void Sequential::check_batch(const data::HostBatch& batch) const {
  const int64_t per = numel(input_shape_);
  if (batch.size <= 0 || static_cast<int64_t>(batch.images.size()) != batch.size * per ||
      static_cast<int64_t>(batch.labels.size()) != batch.size)
    throw UsageError("batch of " + std::to_string(batch.size) + " samples does not match the model input " +
                     shape_string(input_shape_) + " (" + std::to_string(batch.images.size()) + " pixel bytes, " +
                     std::to_string(batch.labels.size()) + " labels)");
}

void Sequential::check_set(const data::ImageSet& set, const char* what) const {
  if (set.count == 0) throw UsageError(std::string("the ") + what + " set is empty");
  if (Shape{set.rows, set.cols, 1} != input_shape_)
    throw UsageError(std::string(what) + " images are " + shape_string({set.rows, set.cols, 1}) +
                     " but the model expects " + shape_string(input_shape_));
}

Sequential::Inputs& Sequential::upload(const data::HostBatch& batch) {
  check_batch(batch);
  const int64_t n = batch.size;
  auto it = inputs_.find(n);
  if (it == inputs_.end()) {
    Shape s{n};
    s.insert(s.end(), input_shape_.begin(), input_shape_.end());
    it = inputs_.emplace(n, Inputs{Tensor(*device_, AXON_UINT8, s), Tensor(*device_, AXON_FLOAT32, s),
                                   Tensor(*device_, AXON_INT32, {n})}).first;
  }
  Inputs& in = it->second;
  in.pixels.copy_from_host(batch.images.data(), batch.images.size());
  in.labels.copy_from_host(batch.labels.data(), batch.labels.size() * sizeof(int32_t));
  ops::normalize_image(in.pixels, in.images, "input");
  return in;
}

const Tensor& Sequential::forward(const data::HostBatch& batch) {
  DeviceScope scope(device());
  Inputs& in = upload(batch);
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

void Sequential::compute_gradients(const data::HostBatch& batch) {
  if (!optimizer_) throw UsageError("Sequential: compile the model first");
  DeviceScope scope(device());
  const Tensor& logits = forward(batch);
  const Inputs& in = inputs_.at(batch.size);
  loss_->forward_backward(logits, in.labels);
  train_metrics_.update(loss_->per_sample_loss(batch.size), logits, in.labels);
  const Tensor* g = &loss_->gradient(batch.size);
  for (size_t i = layers_.size(); i-- > 0;) {
    if (i > 0 && pooled_[i - 1]) {  // layer i is the pool of a fused pair
      --i;
      g = &static_cast<Conv2D&>(*layers_[i]).backward_pooled(*layer_inputs_[i], *g, *pool_after_[i], i > 0);
      continue;
    }
    g = &layers_[i]->backward(*layer_inputs_[i], *g, i > 0);
  }
}

void Sequential::train_step(const data::HostBatch& batch) {
  compute_gradients(batch);
  DeviceScope scope(device());
  optimizer_->apply(params_);
}

const Tensor& Sequential::per_sample_loss(int64_t batch_size) const {
  if (!loss_) throw RuntimeError("the model " + name_ + " is not compiled");
  return loss_->per_sample_loss(batch_size);
}

History Sequential::fit(const data::ImageSet& train, const FitOptions& o) {
  if (!optimizer_) throw UsageError("Sequential::fit: compile the model first");
  if (o.epochs <= 0) throw UsageError("epochs must be positive, got " + std::to_string(o.epochs));
  if (o.batch_size <= 0) throw UsageError("batch size must be positive, got " + std::to_string(o.batch_size));
  check_set(train, "training");
  if (o.validation_data != nullptr) check_set(*o.validation_data, "validation");
  DeviceScope scope(device());
  data::BatchPipeline pipeline(train, o.batch_size, o.shuffle, o.seed, o.prefetch);
  const int64_t steps = o.steps_per_epoch > 0 ? std::min(o.steps_per_epoch, pipeline.steps()) : pipeline.steps();
  const std::function<MetricValues()> read = [this] { return train_metrics_.read(); };

  History history;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    for (Callback* cb : o.callbacks) cb->on_epoch_begin(epoch, o.epochs, steps);
    const auto t0 = std::chrono::steady_clock::now();
    const double wait0 = pipeline.wait_seconds();
    train_metrics_.reset();
    pipeline.begin_epoch(epoch - 1);
    for (int64_t step = 0; step < steps; ++step) {
      train_step(pipeline.next());
      for (Callback* cb : o.callbacks) cb->on_batch_end(step, read);
    }
    EpochLogs logs;
    const MetricValues m = train_metrics_.read();  // the epoch's one unconditional sync
    logs.seconds = seconds_since(t0);
    logs.input_wait_seconds = pipeline.wait_seconds() - wait0;
    logs.epoch = epoch;
    logs.epochs = o.epochs;
    logs.steps = steps;
    logs.samples = m.samples;
    logs.loss = m.loss;
    logs.accuracy = m.accuracy;
    if (o.validation_data != nullptr) {
      const auto t1 = std::chrono::steady_clock::now();
      const MetricValues v = evaluate(*o.validation_data, o.batch_size);
      logs.validation_seconds = seconds_since(t1);
      logs.has_validation = true;
      logs.val_loss = v.loss;
      logs.val_accuracy = v.accuracy;
    }
    history.epochs.push_back(logs);
    for (Callback* cb : o.callbacks) cb->on_epoch_end(logs);
  }
  return history;
}

MetricValues Sequential::evaluate(const data::ImageSet& set, int64_t batch_size) {
  if (!loss_) throw UsageError("Sequential::evaluate: compile the model first");
  check_set(set, "evaluation");
  DeviceScope scope(device());
  data::BatchPipeline pipeline(set, batch_size, false, 0, true);
  pipeline.begin_epoch(0);
  eval_metrics_.reset();
  for (int64_t step = 0; step < pipeline.steps(); ++step) {
    const data::HostBatch& batch = pipeline.next();
    const Tensor& logits = forward(batch);
    const Inputs& in = inputs_.at(batch.size);
    // The loss kernel also writes dlogits; harmless, and keeps one op set.
    loss_->forward_backward(logits, in.labels);
    eval_metrics_.update(loss_->per_sample_loss(batch.size), logits, in.labels);
  }
  return eval_metrics_.read();
}

std::vector<float> Sequential::predict(const data::ImageSet& set, int64_t batch_size) {
  check_set(set, "prediction");
  DeviceScope scope(device());
  data::BatchPipeline pipeline(set, batch_size, false, 0, true);
  pipeline.begin_epoch(0);
  const int64_t classes = layers_.back()->output_shape()[0];
  std::vector<float> out(static_cast<size_t>(set.count * classes));
  for (int64_t step = 0; step < pipeline.steps(); ++step) {
    const data::HostBatch& batch = pipeline.next();
    const Tensor& logits = forward(batch);
    logits.copy_to_host(out.data() + step * batch_size * classes, logits.bytes());
  }
  return out;
}

std::string Sequential::summary() {
  std::string s;
  char line[160];
  const std::string rule(65, '_'), thick(65, '=');
  s += "Model: \"" + name_ + "\"\n" + rule + "\n";
  std::snprintf(line, sizeof line, " %-27s %-25s %s\n", "Layer (type)", "Output Shape", "Param #");
  s += line + thick + "\n";
  for (size_t i = 0; i < layers_.size(); ++i) {
    Layer& l = *layers_[i];
    std::string shape = "(None";
    for (int64_t d : l.output_shape()) shape += ", " + std::to_string(d);
    shape += ")";
    std::snprintf(line, sizeof line, " %-27s %-25s %s\n", (l.name() + " (" + l.type() + ")").c_str(), shape.c_str(),
                  with_commas(l.parameter_count()).c_str());
    s += line;
    if (i + 1 < layers_.size()) s += "\n";
  }
  const int64_t total = parameter_count();
  s += thick + "\nTotal params: " + with_commas(total) + "\nTrainable params: " + with_commas(total) +
       "\nNon-trainable params: 0\n" + rule + "\n";
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
