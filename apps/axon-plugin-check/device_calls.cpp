#include "device_calls.hpp"

#include <cmath>
#include <cstring>

namespace axon::plugin_check {

std::string status_text(axon_status s, const axon_error& err) {
  const size_t n = strnlen(err.message, sizeof err.message);
  return std::string(axon_status_name(s)) + ": " + (n ? std::string(err.message, n) : std::string("no message"));
}

DeviceBuffers::~DeviceBuffers() { free_all(); }

void DeviceBuffers::free_all() {
  for (void* p : held_) api_.deallocate(api_.device_ctx, p);
  held_.clear();
}

void* DeviceBuffers::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = api_.allocate(api_.device_ctx, bytes, &p, &err);
  if (s != AXON_OK) throw CallFailed("allocate(" + std::to_string(bytes) + ") returned " + status_text(s, err));
  if (p == nullptr) throw CallFailed("allocate(" + std::to_string(bytes) + ") returned AXON_OK and a NULL pointer");
  held_.push_back(p);
  return p;
}

void DeviceBuffers::upload(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = api_.copy_host_to_device(api_.device_ctx, dst, src, bytes, &err);
  if (s != AXON_OK) throw CallFailed("copy_host_to_device returned " + status_text(s, err));
}

void DeviceBuffers::download(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = api_.copy_device_to_host(api_.device_ctx, dst, src, bytes, &err);
  if (s != AXON_OK) throw CallFailed("copy_device_to_host returned " + status_text(s, err));
}

void synchronize(const axon_device_api& api) {
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = api.synchronize(api.device_ctx, &err);
  if (s != AXON_OK) throw CallFailed("synchronize returned " + status_text(s, err));
}

std::vector<HostTensor> run_on_device(const axon_device_api& api, axon_kernel_fn fn, const Case& c) {
  DeviceBuffers mem(api);
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
  axon_kernel_call call{};
  call.struct_size = sizeof call;
  call.op = c.op->name;
  call.num_inputs = static_cast<int32_t>(in.size());
  call.inputs = in.data();
  call.num_outputs = static_cast<int32_t>(out.size());
  call.outputs = out.data();
  call.attrs = c.attr_ptr();
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = fn(api.device_ctx, &call, &err);
  if (s != AXON_OK) throw CallFailed("the kernel returned " + status_text(s, err));
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
