#include <axon/error.hpp>
#include <axon/nn/parameter_buffers.hpp>
#include <axon/ops.hpp>

#include <algorithm>

namespace axon::nn {
namespace {
int64_t round_up(int64_t n, int64_t to) { return (n + to - 1) / to * to; }
}  // namespace

void ParameterBuffers::bind(const std::vector<Parameter*>& params, Device& device, int64_t extra_grad_floats) {
  if (bound()) throw RuntimeError("ParameterBuffers::bind: already bound");
  if (extra_grad_floats < 0) throw UsageError("ParameterBuffers::bind: negative extra size");
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (Parameter* p : params) {
    if (p->value.dtype() != AXON_FLOAT32 || &p->value.device() != &device)
      throw UsageError("ParameterBuffers::bind: " + p->name + " is not a float32 tensor on " + device.name());
    offsets.push_back(total);
    total = round_up(total + p->value.numel(), kAlignFloats);
  }
  parameter_floats_ = total;
  const int64_t grad_floats = std::max<int64_t>(kAlignFloats, round_up(total + extra_grad_floats, kAlignFloats));
  values_ = Tensor(device, AXON_FLOAT32, {total});
  gradients_ = Tensor(device, AXON_FLOAT32, {grad_floats});
  // Zero everything first: the padding must hold zeros for good.
  if (total > 0) ops::fill(values_, 0.0f, "parameters");
  ops::fill(gradients_, 0.0f, "parameters");
  for (size_t i = 0; i < params.size(); ++i) {
    Parameter& p = *params[i];
    Tensor value = values_.view(offsets[i], p.value.shape());
    ops::identity(p.value, value, "parameters");
    p.value = value;
    p.grad = gradients_.view(offsets[i], p.value.shape());
  }
  offsets_ = offsets;
  parameter_gradients_ = gradients_.view(0, {total});
  extra_ = gradients_.view(total, {extra_grad_floats});
}

}  // namespace axon::nn
