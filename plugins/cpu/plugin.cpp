// The CPU plugin: N logical CPU devices (config "cpu-devices", default 1)
// sharing the process's cores (config "threads", 0 or unset = all of them).
#include "blas.hpp"
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>

namespace axon::cpu {
namespace {

using sdk::format;
using sdk::require;

// "model name" from /proc/cpuinfo, or a generic name.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto start = line.find_first_not_of(" \t", colon + 1);
        if (start != std::string::npos) return line.substr(start);
      }
    }
  }
  return "CPU";
}

// A /proc/meminfo field ("MemTotal", "MemAvailable") in bytes, 0 if absent.
uint64_t meminfo(const char* key) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  uint64_t kb = 0;
  std::string unit;
  while (in >> name >> kb) {
    std::getline(in, unit);
    if (name.size() == std::strlen(key) + 1 && name.compare(0, name.size() - 1, key) == 0) return kb * 1024;
  }
  return 0;
}

// A positive integer config value; `fallback` when unset, invalid or < 0.
int config_int(const sdk::Plugin& p, const char* key, int fallback) {
  const char* v = p.config(key);
  if (v == nullptr || *v == '\0') return fallback;
  int out = 0;
  auto [end, ec] = std::from_chars(v, v + std::strlen(v), out);
  if (ec != std::errc() || *end != '\0' || out < 0) {
    p.log(AXON_LOG_WARNING, format("ignoring %s=\"%s\": not a non-negative integer; using %d", key, v, fallback));
    return fallback;
  }
  return out;
}

// In-process all-reduce over this plugin's devices: buffers are host memory,
// so it is a sum in device order (deterministic) copied back to every buffer.
axon_status all_reduce(void*, int32_t n, void* const*, void* const* buffers, int64_t count, axon_dtype dtype,
                       axon_reduce_op op, axon_error* err) {
  return sdk::guarded(err, [&] {
    require(n >= 1 && buffers != nullptr, "CPU all_reduce: no buffers");
    require(count >= 0, "CPU all_reduce: negative count");
    require(dtype == AXON_FLOAT32, format("CPU all_reduce: dtype %s is not supported (float32 only)", sdk::dtype_name(dtype)));
    require(op == AXON_REDUCE_SUM || op == AXON_REDUCE_MEAN, "CPU all_reduce: unknown reduce op");
    for (int i = 0; i < n; ++i) require(count == 0 || buffers[i] != nullptr, format("CPU all_reduce: buffer %d is null", i));
    float* out = static_cast<float*>(buffers[0]);
    for (int i = 1; i < n; ++i) {
      const float* in = static_cast<const float*>(buffers[i]);
      for (int64_t j = 0; j < count; ++j) out[j] += in[j];
    }
    if (op == AXON_REDUCE_MEAN) {
      const float scale = 1.0f / static_cast<float>(n);
      for (int64_t j = 0; j < count; ++j) out[j] *= scale;
    }
    for (int i = 1; i < n; ++i)
      if (count > 0) std::memcpy(buffers[i], out, sizeof(float) * static_cast<size_t>(count));
  });
}

// Queued: a CPU device's work is done when its call returns, so every
// wait_for event is already reached and the sum is done (each done event is
// a point always reached) when this returns.
axon_status all_reduce_async(void* ctx, int32_t n, void* const* ctxs, void* const* buffers, int64_t count,
                             axon_dtype dtype, axon_reduce_op op, const axon_event*, const axon_event* done,
                             axon_error* err) {
  if (done == nullptr) return sdk::set_error(err, "CPU all_reduce_async: no events to record"), AXON_INVALID_ARGUMENT;
  return all_reduce(ctx, n, ctxs, buffers, count, dtype, op, err);
}

// axon.timing: kernels on host memory are done when they return, so the
// device's time for the work is the wall time around the calls.
axon_status time_on_stream(void*, void (*enqueue)(void*), void* arg, int32_t iters, float* device_ms,
                           axon_error* err) {
  return sdk::guarded(err, [&] {
    require(enqueue != nullptr && device_ms != nullptr && iters > 0, "time_on_stream: bad arguments");
    const auto t0 = std::chrono::steady_clock::now();
    for (int32_t i = 0; i < iters; ++i) enqueue(arg);
    *device_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  });
}

const axon_timing_extension kTiming = {sizeof(axon_timing_extension), time_on_stream};

const axon_collective_api kCollectives = [] {
  axon_collective_api c{};
  c.struct_size = sizeof c;
  c.all_reduce = all_reduce;  // cross-process reduction is the core's (MPI)
  c.all_reduce_async = all_reduce_async;
  return c;
}();

class CpuPlugin final : public sdk::Plugin {
 public:
  CpuPlugin() : blas_error_(blas_init()), blas_(blas_description()) {}

  // No BLAS library, no devices (unavailable_reason says why).
  int device_count() noexcept override {
    if (!blas_error_.empty()) return 0;
    try {
      const int n = std::max(1, config_int(*this, "cpu-devices", 1));
      warn_if_oversubscribed(n);
      return n;
    } catch (...) {
      return 1;
    }
  }

  // Threads of device `id`: the configured total (default all CPUs) divided
  // evenly, the first devices taking the remainder; never below 1.
  int threads_for(int id) const {
    const int total = std::max(1, config_int(*this, "threads", 0) > 0 ? config_int(*this, "threads", 0) : available_cpus());
    const int n = std::max(1, config_int(*this, "cpu-devices", 1));
    return std::max(1, total / n + (id < total % n ? 1 : 0));
  }

  axon_device_props device_props(int id) override {
    check_id(id);
    axon_device_props p{};
    const int threads = threads_for(id);
    sdk::copy_string(p.name, format("%s (%d thread%s)", cpu_model().c_str(), threads, threads == 1 ? "" : "s"));
    p.physical_id = id;
    p.memory_total = meminfo("MemTotal");
    p.memory_free = meminfo("MemAvailable");
    p.threads = threads;
    p.host_memory = 1;
    sdk::copy_string(p.description, format("logical_devices=%d, simd=%s, blas=%s", device_count(),
                                           simd::isa_name(simd::isa()), blas_.c_str()));
    return p;
  }

  std::unique_ptr<sdk::Device> open_device(int id, const axon_device_config& config) override {
    check_id(id);
    const int threads = config.threads > 0 ? config.threads : threads_for(id);
    log(AXON_LOG_DEBUG, format("opening /device:CPU:%d with %d thread(s); %s", config.logical_index, threads, blas_.c_str()));
    return std::make_unique<CpuDevice>(config.logical_index, threads, meminfo("MemTotal"));
  }

  std::string unavailable_reason() override { return blas_error_; }

  const axon_collective_api* collectives() override { return &kCollectives; }
  const void* extension(const char* name, uint32_t version) override {
    return std::strcmp(name, AXON_EXTENSION_TIMING) == 0 && version == 1 ? &kTiming : nullptr;
  }

 private:
  void check_id(int id) {
    const int n = device_count();
    require(id >= 0 && id < n, format("cpu: no device %d (there %s %d)", id, n == 1 ? "is" : "are", n));
  }
  // Each device runs at least one thread: more devices than cores share
  // them, which the user should hear of once.
  void warn_if_oversubscribed(int devices) {
    const int cores = available_cpus();
    if (devices <= cores || oversubscription_told_) return;
    oversubscription_told_ = true;
    log(AXON_LOG_WARNING, format("%d logical CPU devices on %d core%s: each device runs at least one thread, so they "
                                 "share the cores and each runs slower than on a core of its own",
                                 devices, cores, cores == 1 ? "" : "s"));
  }

  std::string blas_error_, blas_;
  bool oversubscription_told_ = false;
};

}  // namespace

const sdk::KernelTable& kernel_table() {
  static const sdk::KernelTable table = [] {
    sdk::KernelTable t;
    add_conv_kernels(t);
    add_conv_pool_kernels(t);
    add_pool_kernels(t);
    add_math_kernels(t);
    add_batch_norm_kernels(t);
    add_layer_norm_kernels(t);
    add_depthwise_kernels(t);
    add_activation_kernels(t);
    add_softmax_kernels(t);
    add_arithmetic_kernels(t);
    add_shape_kernels(t);
    add_optimizer_kernels(t);
    add_loss_kernels(t);
    add_random_kernels(t);
    add_reduce_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace axon::cpu

AXON_DEFINE_PLUGIN(new axon::cpu::CpuPlugin(), "cpu", "0.1.0", "CPU", 100)
