#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layer.hpp>
#include <axon/ops.hpp>
#include <axon/runtime.hpp>

#include <cctype>

namespace axon::nn {

std::string Layer::input_count_error(int n) const {
  if (n >= min_inputs() && n <= max_inputs()) return {};
  const std::string takes = min_inputs() == max_inputs()
                                ? std::to_string(min_inputs())
                                : "from " + std::to_string(min_inputs()) + " to " + std::to_string(max_inputs());
  return "takes " + takes + (max_inputs() == 1 ? " input" : " inputs") + ", got " + std::to_string(n);
}

namespace {
// A weight's first values as its layer's default initializer draws them.
Tensor default_value(Device& device, const WeightSpec& spec, Rng& rng) {
  switch (spec.initializer) {
    case Initializer::glorot_uniform: return make_tensor(device, spec.shape, glorot_uniform(spec.shape, rng));
    case Initializer::ones:
      return make_tensor(device, spec.shape, std::vector<float>(static_cast<size_t>(numel(spec.shape)), 1.0f));
    case Initializer::zeros: break;
  }
  return zeros(device, spec.shape);
}
}  // namespace

void Layer::set_initializer(const std::string& weight, KerasInitializer init) {
  if (built()) throw UsageError(what() + ": set_initializer after build");
  initializers_[weight] = std::move(init);
}

KerasInitializer Layer::initializer(const std::string& weight, const char* fallback) const {
  const auto it = initializers_.find(weight);
  return it != initializers_.end() ? it->second : keras_initializer(fallback);
}

void Layer::set_regularizer(const std::string& weight, Regularizer r) {
  if (built()) throw UsageError(what() + ": set_regularizer after build");
  for (const double f : {r.l1, r.l2})
    if (!(f >= 0 && f <= 1e30)) throw UsageError(what() + ": a regularizer's factors must be from 0 to 1e30");
  if (r.any()) regularizers_[weight] = r;
  else regularizers_.erase(weight);
}

Regularizer Layer::regularizer(const std::string& weight) const {
  const auto it = regularizers_.find(weight);
  return it != regularizers_.end() ? it->second : Regularizer{};
}

std::vector<std::pair<Parameter*, Regularizer>> Layer::regularized_weights() {
  std::vector<std::pair<Parameter*, Regularizer>> out;
  for (Parameter& p : weights_)
    if (const Regularizer r = regularizer(p.name.substr(name_.size() + 1)); r.any()) out.emplace_back(&p, r);
  return out;
}

const Shape& Layer::build(std::span<const Shape> inputs, Device& device, Rng& rng, TensorPool& pool) {
  if (built()) throw RuntimeError("layer " + name_ + " is built twice");
  if (const std::string why = input_count_error(static_cast<int>(inputs.size())); !why.empty())
    throw UsageError(what() + " " + why);
  input_shapes_.assign(inputs.begin(), inputs.end());
  try {
    output_shape_ = output_shape(inputs);
  } catch (const UsageError& e) {
    throw UsageError(what() + ": " + e.what());
  }
  const std::vector<WeightSpec> specs = weight_specs(inputs);
  for (const WeightSpec& spec : specs)
    if (const auto named = initializers_.find(spec.name); named != initializers_.end())
      if (const std::string why = initializer_shape_error(named->second, spec.shape); !why.empty())
        throw UsageError(what() + ": " + spec.name + ": " + why);
  for (const WeightSpec& spec : specs) {
    Parameter p;
    p.name = name_ + "/" + spec.name;
    p.trainable = spec.trainable;
    const auto named = initializers_.find(spec.name);
    p.value = named != initializers_.end()
                  ? make_tensor(device, spec.shape, initial_values(named->second, spec.shape, rng))
                  : default_value(device, spec, rng);
    if (p.trainable) p.grad = Tensor(device, AXON_FLOAT32, spec.shape);
    weights_.push_back(std::move(p));
  }
  device_ = &device;
  pool_ = &pool;
  on_build(device, rng);
  return output_shape_;
}

const Shape& Layer::build(const Shape& input, Device& device, Rng& rng) {
  own_pool_ = std::make_unique<TensorPool>(device);
  return build({&input, 1}, device, rng, *own_pool_);
}

Device& Layer::device() const {
  if (device_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  return *device_;
}

std::vector<Parameter*> Layer::parameters() {
  std::vector<Parameter*> v;
  for (Parameter& p : weights_) v.push_back(&p);
  return v;
}

int64_t Layer::parameter_count(bool trainable_only) const {
  int64_t n = 0;
  for (const Parameter& p : weights_)
    if (p.trainable || !trainable_only) n += p.value.numel();
  return n;
}

Tensor Layer::backward(const Tensor& dy, bool need_dx) {
  Tensor dx;
  const bool need[1] = {need_dx};
  backward(dy, need, std::span<Tensor>(&dx, 1));
  return dx;
}

Tensor Layer::take(int64_t n, const Shape& per_sample, axon_dtype dtype) const {
  if (pool_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  Shape s{n};
  s.insert(s.end(), per_sample.begin(), per_sample.end());
  return pool_->take(dtype, std::move(s));
}

void Layer::add_bias_and_activate(Activation act, const Tensor* bias, Tensor& z, Tensor& y) const {
  if (bias != nullptr) ops::bias_add(z, *bias, z, name_);
  if (act != Activation::linear) activate(act, z, y, name_);
}

Tensor Layer::take_pre_activation(Activation act, const Tensor& y) const {
  return act == Activation::linear ? y : take_like(y);
}

void Layer::finish_forward(Activation act, const Tensor* bias, const Tensor& x, Tensor& z, Tensor& y,
                           Kept& kept) const {
  add_bias_and_activate(act, bias, z, y);
  if (!remembers()) return;
  kept.x = x;
  kept.y = y;
  if (act != Activation::linear && uses_input(act)) kept.z = z;
}

Tensor Layer::bias_and_activation_grad(Activation act, const Tensor& dy, const Tensor& z, const Tensor& y,
                                       Tensor* bias_grad) const {
  Tensor dz = dy;
  if (act != Activation::linear) {
    dz = take_like(dy);
    activation_grad(act, dy, z, y, dz, name_);
  }
  if (bias_grad != nullptr) ops::bias_add_grad(dz, *bias_grad, name_);
  return dz;
}

Tensor Layer::take_like(const Tensor& t) const {
  if (pool_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  return pool_->take(t.dtype(), t.shape());
}

Tensor Layer::take_exact(Shape shape) const {
  if (pool_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  return pool_->take(AXON_FLOAT32, std::move(shape));
}

Tensor Layer::group_part(const Tensor& t, int64_t groups, int64_t g) const {
  Shape shape = t.shape();
  if (shape.size() != 4) throw RuntimeError(what() + ": a group of a tensor of rank " + std::to_string(shape.size()));
  shape[3] /= groups;
  Tensor part = take_exact(shape);
  ops::slice(t, part, {0, 0, 0, g * shape[3]}, name_);
  return part;
}

void Layer::join_groups(const std::vector<Tensor>& parts, Tensor& whole) const {
  Shape part_shape = whole.shape();
  part_shape.at(3) /= static_cast<int64_t>(parts.size());
  std::vector<Tensor> shaped;
  std::vector<const Tensor*> pointers;
  for (const Tensor& p : parts) shaped.push_back(p.reshaped(part_shape));
  for (const Tensor& p : shaped) pointers.push_back(&p);
  ops::concat(pointers, whole, 3, name_);
}

const axon_conv2d_attrs& Layer::channel_product() {
  static const axon_conv2d_attrs a = ops::conv2d_attrs(1, 1, 1, 1, AXON_PADDING_VALID);
  return a;
}

std::string Layer::what() const { return std::string(type()) + " '" + name_ + "'"; }

bool Layer::fused_ops() const {
  // AXON_FUSED_OPS=0 (or false, no, off) turns fused ops off for every layer
  // (to compare, or to rule them out when chasing a numerical difference).
  // Read once, through the runtime's Config, which rejects a malformed value.
  static const bool on = Runtime::get().config().fused_ops;
  return fused_ops_ && on;
}

std::string default_layer_name(const std::string& keras_class) {
  // Keras' to_snake_case: "MaxPooling2D" -> "max_pooling2d", "ReLU" -> "re_lu".
  std::string out;
  const size_t n = keras_class.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = keras_class[i];
    const bool upper = std::isupper(static_cast<unsigned char>(c)) != 0;
    if (i > 0 && upper) {
      const char prev = keras_class[i - 1];
      const bool word_starts = i + 1 < n && std::islower(static_cast<unsigned char>(keras_class[i + 1])) != 0;
      if (std::islower(static_cast<unsigned char>(prev)) != 0 || (word_starts && prev != '_')) out += '_';
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace axon::nn
