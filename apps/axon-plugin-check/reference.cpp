#include "reference.hpp"

#include "kernels.hpp"  // the reference plugin's: ref::kernel_table()

#include <axon/tolerance_batch_norm.hpp>
#include <axon/tolerance_layer_norm.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace axon::plugin_check {
namespace {

// The reference kernels take a device but keep nothing in it: their memory
// is host memory, and none of these is ever called.
class HostDevice final : public axon::sdk::Device {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*) noexcept override {}
  void copy_host_to_device(void*, const void*, size_t) override {}
  void copy_device_to_host(void*, const void*, size_t) override {}
  void copy_device_to_device(void*, const void*, size_t) override {}
  axon_kernel_fn get_kernel(const char* op, axon_dtype t) override { return ref::kernel_table().find(op, t); }
  const char* const* list_ops() override { return ref::kernel_table().list(); }
};

void* data_of(HostTensor& t) { return t.bytes.empty() ? nullptr : t.bytes.data(); }

}  // namespace

std::vector<HostTensor> run_reference(const OpSchema& op, std::vector<HostTensor> inputs,
                                      std::vector<HostTensor> outputs, const void* attrs, bool in_place) {
  const axon_dtype key = !inputs.empty() ? inputs[0].dtype : outputs.at(0).dtype;
  axon_kernel_fn fn = ref::kernel_table().find(op.name, key);
  if (fn == nullptr) throw std::runtime_error(std::string("the reference has no ") + op.name + " kernel");
  std::vector<axon_tensor> in, out;
  for (HostTensor& t : inputs) in.push_back(t.view(data_of(t)));
  for (HostTensor& t : outputs) out.push_back(t.view(data_of(t)));
  if (in_place) out.at(0).data = in.at(0).data;
  axon_kernel_call call{};
  call.struct_size = sizeof call;
  call.op = op.name;
  call.num_inputs = static_cast<int32_t>(in.size());
  call.inputs = in.data();
  call.num_outputs = static_cast<int32_t>(out.size());
  call.outputs = out.data();
  call.attrs = attrs;
  static HostDevice device;
  axon_error err{};
  err.struct_size = sizeof err;
  if (fn(&device, &call, &err) != AXON_OK)
    throw std::runtime_error(std::string("the reference refused the case: ") + err.message);
  if (op.in_place_inputs > 0) {
    inputs.resize(static_cast<size_t>(op.in_place_inputs));
    return inputs;
  }
  if (in_place) outputs[0] = inputs[0];
  return outputs;
}

namespace {

bool is_batch_norm(OpId id) {
  return id == OpId::FusedBatchNormV3 || id == OpId::FusedBatchNormGradV3 || id == OpId::FusedBatchNormEx ||
         id == OpId::FusedBatchNormGradEx || id == OpId::FusedBatchNormAddEx || id == OpId::FusedBatchNormAddGradEx;
}

// Batch normalization's results are not sums of products: S is the
// magnitude B of axon/tolerance_batch_norm.hpp, computed from the inputs
// (with relu: of the dy that counts, masked by y; relu itself only lowers
// y's error). A side input adds its magnitude to y's; its gradient, dy
// masked, is exact (magnitude 0).
std::vector<HostTensor> batch_norm_magnitudes(const Case& c) {
  const OpId id = c.op->id;
  const bool forward = id == OpId::FusedBatchNormV3 || id == OpId::FusedBatchNormEx || id == OpId::FusedBatchNormAddEx;
  const bool side = id == OpId::FusedBatchNormAddEx || id == OpId::FusedBatchNormAddGradEx;
  const bool fused = id != OpId::FusedBatchNormV3 && id != OpId::FusedBatchNormGradV3;  // fused attrs
  const HostTensor& x = c.inputs[forward ? 0 : 1];
  const auto& a =
      fused ? std::get<axon_fused_batch_norm_attrs>(c.attrs).batch_norm : std::get<axon_batch_norm_attrs>(c.attrs);
  const int64_t ch = x.dims.back(), rows = ch > 0 ? x.numel() / ch : 0;
  tol::BatchNormInputs in{};
  in.x = x.f32(), in.rows = rows, in.ch = ch;
  in.scale = c.inputs[forward ? 1 : 2].f32(), in.offset = forward ? c.inputs[2].f32() : nullptr;
  in.mean = c.inputs[3].f32(), in.variance = c.inputs[4].f32();
  in.epsilon = a.epsilon, in.exponential_avg_factor = a.exponential_avg_factor, in.training = a.is_training != 0;
  HostTensor dy = c.inputs[0];
  const bool masks = fused && std::get<axon_fused_batch_norm_attrs>(c.attrs).activation == AXON_ACTIVATION_RELU;
  if (!forward && masks)
    for (int64_t i = 0; i < dy.numel(); ++i)
      if (!(c.inputs[5].f32()[i] > 0.0f)) dy.f32()[i] = 0.0f;
  const auto b = forward ? tol::batch_norm_magnitudes(in, static_cast<int>(c.outputs.size()))
                         : tol::batch_norm_grad_magnitudes(in, dy.f32());
  std::vector<HostTensor> out = c.outputs;
  for (size_t k = 0; k < out.size(); ++k)
    for (int64_t i = 0; i < out[k].numel(); ++i)
      out[k].f32()[i] = k < b.size() ? static_cast<float>(b[k][static_cast<size_t>(i)]) : 0.0f;
  if (side && forward)
    for (int64_t i = 0; i < out[0].numel(); ++i) out[0].f32()[i] += std::fabs(c.inputs[5].f32()[i]);
  return out;
}

// LayerNorm's and LayerNormGrad's S: the magnitudes B of
// axon/tolerance_layer_norm.hpp with float32 row sums allowed (t = sqrt(K)).
std::vector<HostTensor> layer_norm_magnitudes(const Case& c) {
  const bool forward = c.op->id == OpId::LayerNorm;
  const HostTensor& x = c.inputs[forward ? 0 : 1];
  tol::LayerNormInputs in{};
  in.x = x.f32(), in.rows = x.dims[0], in.k = x.dims[1];
  in.scale = c.inputs[forward ? 1 : 2].f32(), in.offset = forward ? c.inputs[2].f32() : nullptr;
  in.epsilon = std::get<axon_layer_norm_attrs>(c.attrs).epsilon;
  in.float32_statistics = true;
  const auto b = forward ? tol::layer_norm_magnitudes(in) : tol::layer_norm_grad_magnitudes(in, c.inputs[0].f32());
  std::vector<HostTensor> out = c.outputs;
  for (size_t k = 0; k < out.size(); ++k)
    for (int64_t i = 0; i < out[k].numel(); ++i) out[k].f32()[i] = static_cast<float>(b[k][static_cast<size_t>(i)]);
  return out;
}

}  // namespace

Expected expected_results(const Case& c) {
  Expected e;
  e.want = run_reference(*c.op, c.inputs, c.outputs, c.attr_ptr(), c.in_place);
  if (is_batch_norm(c.op->id)) {
    e.abs_sum = batch_norm_magnitudes(c);
    return e;
  }
  if (c.op->id == OpId::LayerNorm || c.op->id == OpId::LayerNormGrad) {
    e.abs_sum = layer_norm_magnitudes(c);
    return e;
  }
  bool any_sum = false;
  for (Rule r : c.rules) any_sum = any_sum || r == Rule::sum;
  if (!any_sum) return e;
  std::vector<HostTensor> magnitudes = c.inputs;
  for (size_t i = 0; i < magnitudes.size(); ++i) {
    if (i >= c.abs_inputs.size() || !c.abs_inputs[i] || magnitudes[i].dtype != AXON_FLOAT32) continue;
    float* p = magnitudes[i].f32();
    for (int64_t k = 0; k < magnitudes[i].numel(); ++k) p[k] = std::fabs(p[k]);
  }
  e.abs_sum = run_reference(*c.op, std::move(magnitudes), c.outputs, c.attr_ptr(), c.in_place);
  return e;
}

}  // namespace axon::plugin_check
