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
  std::vector<int64_t> offsets(params.size());
  int64_t total = 0;
  // Trainable weights first, so the optimizer and the all-reduce see one
  // contiguous part; the non-trainable ones after it.
  for (const bool trainable : {true, false})
    for (size_t i = 0; i < params.size(); ++i) {
      const Parameter& p = *params[i];
      if (p.trainable != trainable) continue;
      if (p.value.dtype() != AXON_FLOAT32 || &p.value.device() != &device)
        throw UsageError("ParameterBuffers::bind: " + p.name + " is not a float32 tensor on " + device.name());
      offsets[i] = total;
      total = round_up(total + p.value.numel(), kAlignFloats);
      if (trainable) trainable_floats_ = total;
    }
  const int64_t grad_floats = std::max<int64_t>(kAlignFloats, round_up(trainable_floats_ + extra_grad_floats, kAlignFloats));
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
    if (p.trainable) p.grad = gradients_.view(offsets[i], p.value.shape());
  }
  offsets_ = offsets;
  trainable_values_ = values_.view(0, {trainable_floats_});
  parameter_gradients_ = gradients_.view(0, {trainable_floats_});
  extra_ = gradients_.view(trainable_floats_, {extra_grad_floats});
}

std::vector<int64_t> ParameterBuffers::trainable_segment_ends() const {
  std::vector<int64_t> starts;
  for (int64_t o : offsets_)
    if (o < trainable_floats_) starts.push_back(o);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::vector<int64_t> ends;
  for (size_t i = 1; i < starts.size(); ++i) ends.push_back(starts[i]);
  if (trainable_floats_ > 0) ends.push_back(trainable_floats_);
  return ends;
}

}  // namespace axon::nn
