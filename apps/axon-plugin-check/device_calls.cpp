#include "device_calls.hpp"

#include <cmath>
#include <cstring>

namespace axon::plugin_check {
namespace {

// What run_on_device fills outputs with: NaN, or 0xEE bytes.
void poison(HostTensor& t) {
  if (t.dtype == AXON_FLOAT32)
    for (int64_t i = 0; i < t.numel(); ++i) t.f32()[i] = std::nanf("");
  else if (!t.bytes.empty())
    std::memset(t.bytes.data(), 0xEE, t.bytes.size());
}

bool still_poisoned(HostTensor& t) {
  HostTensor p(t.dtype, t.dims);
  poison(p);
  if (t.dtype != AXON_FLOAT32) return t.bytes == p.bytes;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isnan(t.f32()[i])) return false;
  return true;
}

}  // namespace

std::vector<HostTensor> run_on_device(const axon_device_api& api, axon_kernel_fn fn, const Case& c) {
  DeviceMemory mem(api);
  std::vector<axon_tensor> in, out;
  for (const HostTensor& t : c.inputs) {
    void* p = mem.allocate(t.bytes.size());
    mem.upload(p, t.bytes.data(), t.bytes.size());
    in.push_back(t.view(p));
  }
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    const HostTensor& t = c.outputs[k];
    if (k == 0 && c.in_place) {
      out.push_back(t.view(in.at(0).data));
      continue;
    }
    HostTensor poisoned(t.dtype, t.dims);
    poison(poisoned);
    void* p = mem.allocate(t.bytes.size());
    mem.upload(p, poisoned.bytes.data(), poisoned.bytes.size());
    out.push_back(t.view(p));
  }
  try {
    client::call_kernel(api, fn, c.op->name, in, out, c.attr_ptr(), "the kernel");
  } catch (const CallFailed& e) {
    if (e.status() != AXON_UNIMPLEMENTED) throw;
    // Declined: the host runs the call elsewhere, so nothing may be written.
    for (size_t k = 0; k < c.outputs.size(); ++k) {
      if (k == 0 && c.in_place) continue;
      const HostTensor& t = c.outputs[k];
      HostTensor after(t.dtype, t.dims);
      mem.download(after.bytes.data(), out[k].data, after.bytes.size());
      if (!still_poisoned(after))
        throw CallFailed(std::string(e.what()) + ", yet wrote output " + std::to_string(k) +
                         ": a declined call must leave its outputs untouched (axon runs it on another device)");
    }
    throw;
  }
  synchronize(api);

  std::vector<HostTensor> results;
  const bool from_inputs = c.op->in_place_inputs > 0;
  for (int k = 0; k < c.result_count(); ++k) {
    const HostTensor& like = from_inputs ? c.inputs[static_cast<size_t>(k)] : c.outputs[static_cast<size_t>(k)];
    const void* src = from_inputs ? in[static_cast<size_t>(k)].data : out[static_cast<size_t>(k)].data;
    HostTensor r(like.dtype, like.dims);
    mem.download(r.bytes.data(), src, r.bytes.size());
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace axon::plugin_check
