#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/layer.hpp>
#include <axon/runtime.hpp>

namespace axon::nn {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::relu: return "relu";
    case Activation::softmax: return "softmax";
    case Activation::linear: break;
  }
  return "linear";
}

Shape Layer::build(const Shape& input_shape, Device& device, Rng& rng) {
  input_shape_ = input_shape;
  output_shape_ = do_build(input_shape, device, rng);
  device_ = &device;
  return output_shape_;
}

Device& Layer::device() const {
  if (device_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  return *device_;
}

int64_t Layer::parameter_count() {
  int64_t n = 0;
  for (Parameter* p : parameters()) n += p->value.numel();
  return n;
}

Tensor& Layer::buffer(int slot, int64_t n, const Shape& per_sample, axon_dtype dtype) {
  auto key = std::make_pair(slot, n);
  auto it = buffers_.find(key);
  if (it == buffers_.end()) {
    Shape s{n};
    s.insert(s.end(), per_sample.begin(), per_sample.end());
    it = buffers_.emplace(key, Tensor(device(), dtype, std::move(s))).first;
  }
  return it->second;
}

namespace {
// AXON_FUSED_OPS=0 (or false, no, off) turns fused ops off for every layer
// (to compare, or to rule them out when chasing a numerical difference).
// Read once, through the runtime's Config, which rejects a malformed value.
bool fused_ops_enabled() {
  static const bool on = Runtime::get().config().fused_ops;
  return on;
}
}  // namespace

Device* Layer::fused_device(OpId fused_op, OpId plain_op, const Tensor& x) const {
  if (!fused_ops_ || !fused_ops_enabled()) return nullptr;
  const Tensor* inputs[] = {&x};
  OpCall c;
  c.op = plain_op;
  c.layer = name();
  c.inputs = inputs;
  Device& d = place(c);
  if (!d.has_kernel(fused_op, x.dtype())) return nullptr;
  note_fused_path(fused_op, d, name(), x.dtype());
  return &d;
}

const Tensor& Layer::none() {
  static const Tensor empty;
  return empty;
}

}  // namespace axon::nn
