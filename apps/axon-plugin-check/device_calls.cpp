#include "device_calls.hpp"

#include <cmath>
#include <cstring>

namespace axon::plugin_check {

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
    HostTensor poison(t.dtype, t.dims);
    if (t.dtype == AXON_FLOAT32)
      for (int64_t i = 0; i < poison.numel(); ++i) poison.f32()[i] = std::nanf("");
    else if (!poison.bytes.empty())
      std::memset(poison.bytes.data(), 0xEE, poison.bytes.size());
    void* p = mem.allocate(t.bytes.size());
    mem.upload(p, poison.bytes.data(), poison.bytes.size());
    out.push_back(t.view(p));
  }
  client::call_kernel(api, fn, c.op->name, in, out, c.attr_ptr(), "the kernel");
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
