// Op dispatch: placement (scope, priority, soft/strict fallback), staging of
// tensors that live on another device, the placement log and the profiler.
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/profile.hpp>
#include <axon/runtime.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace axon {
namespace {

thread_local Device* t_scope = nullptr;

std::mutex g_seen_mutex;
// Each set only grows; it holds one entry per distinct op/layer/device.
std::set<std::tuple<std::string, std::string, std::string>>& logged_placements() {
  static auto* s = new std::set<std::tuple<std::string, std::string, std::string>>();
  return *s;
}
std::set<std::pair<std::string, std::string>>& warned_fallbacks() {
  static auto* s = new std::set<std::pair<std::string, std::string>>();
  return *s;
}

axon_dtype call_dtype(const OpCall& call) {
  if (!call.inputs.empty() && call.inputs[0] != nullptr) return call.inputs[0]->dtype();
  if (!call.outputs.empty() && call.outputs[0] != nullptr) return call.outputs[0]->dtype();
  return AXON_FLOAT32;
}

std::string devices_with_kernel(const char* op, axon_dtype dtype) {
  std::string list;
  for (Device* d : Runtime::get().devices())
    if (d->has_kernel(op, dtype)) { if (!list.empty()) list += ", "; list += d->name(); }
  return list.empty() ? "(none)" : list;
}

// The device that runs `call` when the requested one has no kernel.
Device& fall_back(const OpCall& call, Device& requested, axon_dtype dtype) {
  const Runtime& rt = Runtime::get();
  if (rt.config().strict_placement)
    throw RuntimeError(std::string("op ") + call.op + " has no " + dtype_name(dtype) + " kernel on " +
                       requested.name() + "; devices with this kernel: " + devices_with_kernel(call.op, dtype));
  Device* cpu = rt.cpu_device();
  if (cpu == nullptr || cpu == &requested || !cpu->has_kernel(call.op, dtype))
    throw RuntimeError(std::string("op ") + call.op + " has no " + dtype_name(dtype) + " kernel on " +
                       requested.name() + " and no CPU device to fall back to has one; devices with this kernel: " +
                       devices_with_kernel(call.op, dtype));
  bool first;
  {
    std::lock_guard<std::mutex> lock(g_seen_mutex);
    first = warned_fallbacks().emplace(call.op, requested.name()).second;
  }
  if (first)
    log::warning("placement", std::string("op ") + call.op + " has no kernel on " + requested.name() + " (" +
                                  dtype_name(dtype) + "); running it on " + cpu->name() +
                                  " instead. Use --strict-placement to make this an error.");
  return *cpu;
}

Device& place_with(const OpCall& call, axon_dtype dtype) {
  if (Device* scoped = DeviceScope::current()) {
    if (scoped->has_kernel(call.op, dtype)) return *scoped;
    return fall_back(call, *scoped, dtype);
  }
  const Runtime& rt = Runtime::get();
  for (Device* d : rt.devices())
    if (d->has_kernel(call.op, dtype)) return *d;
  if (rt.devices().empty()) throw RuntimeError(std::string("op ") + call.op + ": no devices are available");
  throw RuntimeError(std::string("op ") + call.op + " has no " + dtype_name(dtype) + " kernel on any device");
}

void log_placement(const OpCall& call, const Device& d) {
  {
    std::lock_guard<std::mutex> lock(g_seen_mutex);
    if (!logged_placements().emplace(call.op, call.layer, d.name()).second) return;
  }
  std::string line = std::string("Executing op ") + call.op + " in device " + d.name() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Ops that update some inputs in place (plugin_abi.h); when they run on a
// fallback device those inputs must be copied back.
int in_place_inputs(const char* op) {
  if (std::strcmp(op, "ApplyAdam") == 0) return 3;  // var, m, v
  return 0;
}

void copy_between(const Tensor& src, Tensor& dst) {
  if (src.bytes() == 0) return;
  std::vector<std::byte> host(src.bytes());
  src.copy_to_host(host.data(), host.size());
  dst.copy_from_host(host.data(), host.size());
}

}  // namespace

DeviceScope::DeviceScope(Device& device) : previous_(t_scope) { t_scope = &device; }
DeviceScope::DeviceScope(const std::string& device_name) : DeviceScope(Runtime::get().device(device_name)) {}
DeviceScope::~DeviceScope() { t_scope = previous_; }
Device* DeviceScope::current() { return t_scope; }

Device& place(const OpCall& call) { return place_with(call, call_dtype(call)); }

void run(const OpCall& call) {
  axon_dtype dtype = call_dtype(call);
  Device& d = place_with(call, dtype);
  if (Runtime::get().config().log_device_placement) log_placement(call, d);

  // Tensors on another device are staged on `d` (through host memory).
  std::vector<Tensor> staged_in(call.inputs.size());
  std::vector<axon_tensor> in(call.inputs.size());
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor* t = call.inputs[i];
    if (t == nullptr || !t->defined()) continue;  // zero view: an absent input
    if (&t->device() != &d) {
      staged_in[i] = t->to(d);
      in[i] = staged_in[i].c_view();
    } else {
      in[i] = t->c_view();
    }
  }
  std::vector<Tensor> staged_out(call.outputs.size());
  std::vector<axon_tensor> out(call.outputs.size());
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    Tensor* t = call.outputs[i];
    if (t == nullptr || !t->defined()) continue;
    if (&t->device() != &d) {
      staged_out[i] = Tensor(d, t->dtype(), t->shape());
      out[i] = staged_out[i].c_view();
    } else {
      out[i] = t->c_view();
    }
  }

  axon_kernel_call kc{};
  kc.struct_size = sizeof kc;
  kc.op = call.op;
  kc.num_inputs = static_cast<int32_t>(in.size());
  kc.inputs = in.data();
  kc.num_outputs = static_cast<int32_t>(out.size());
  kc.outputs = out.data();
  kc.attrs = call.attrs;

  if (op_profiling()) {
    auto t0 = std::chrono::steady_clock::now();
    d.launch(kc, dtype);
    d.synchronize();
    record_op_time(call.op, d.name(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } else {
    d.launch(kc, dtype);
  }

  for (size_t i = 0; i < call.outputs.size(); ++i)
    if (staged_out[i].defined()) copy_between(staged_out[i], *call.outputs[i]);
  int mutated = std::min<int>(in_place_inputs(call.op), static_cast<int>(call.inputs.size()));
  for (int i = 0; i < mutated; ++i)
    if (staged_in[i].defined()) {
      Tensor target = *call.inputs[i];  // shares the caller's buffer
      copy_between(staged_in[i], target);
    }
}

}  // namespace axon
