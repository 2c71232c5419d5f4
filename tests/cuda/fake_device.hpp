// What the fake-library tests share: the kernel library's table
// (axon_cuda_kernels_init) over the fake CUDA libraries, devices opened as
// the plugin opens them with their log captured, and kernels run through the
// device's kernel table on tensors in the fake runtime's "device memory"
// (host memory).
#pragma once

#include "axon_cuda_kernels.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

extern "C" axon_status axon_cuda_kernels_init(uint32_t version, axon_cuda_kernels_api* out, axon_error* err);

namespace axon::fake_device {

inline std::mutex log_mu;
inline std::vector<std::string> log_lines;

inline void capture_log(void*, axon_log_level, const char*, const char* message) {
  std::lock_guard<std::mutex> lock(log_mu);
  log_lines.emplace_back(message);
}

inline int logged(const std::string& part) {
  std::lock_guard<std::mutex> lock(log_mu);
  int n = 0;
  for (const auto& l : log_lines) n += l.find(part) != std::string::npos;
  return n;
}

inline const axon_host_api& host() {
  static const axon_host_api h = [] {
    axon_host_api a{};
    a.struct_size = sizeof a;
    a.abi_major = AXON_ABI_MAJOR;
    a.abi_minor = AXON_ABI_MINOR;
    a.log = capture_log;
    return a;
  }();
  return h;
}

inline const axon_cuda_kernels_api& kernels() {
  static const axon_cuda_kernels_api api = [] {
    axon_cuda_kernels_api a{};
    axon_error err{};
    if (axon_cuda_kernels_init(AXON_CUDA_KERNELS_VERSION, &a, &err) != AXON_OK) FAIL(err.message);
    return a;
  }();
  return api;
}

struct Result {
  axon_status status = AXON_OK;
  std::string message;
};

inline Result result(axon_status s, const axon_error& err) { return {s, s == AXON_OK ? "" : err.message}; }

// One device of the fake runtime, opened as the plugin opens it.
struct Device {
  axon_device_api api{};
  std::string label;

  explicit Device(int ordinal, axon_memory_mode mode = AXON_MEMORY_GROWTH, uint64_t limit = 0, bool allow_tf32 = false)
      : label("/device:GPU:" + std::to_string(ordinal)) {
    axon_cuda_open_args args{};
    args.struct_size = sizeof args;
    args.host = &host();
    args.plugin_name = "cuda";
    args.cuda_ordinal = ordinal;
    args.label = label.c_str();
    args.allow_tf32 = allow_tf32;
    args.config.struct_size = sizeof args.config;
    args.config.memory_mode = mode;
    args.config.memory_limit_bytes = limit;
    axon_error err{};
    const axon_device_api* table = nullptr;
    const axon_status s = kernels().open_device(&args, &table, &err);
    if (s != AXON_OK) FAIL(err.message);
    api = *table;
  }
  ~Device() { api.close(api.device_ctx); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Result synchronize() {
    axon_error err{};
    return result(api.synchronize(api.device_ctx, &err), err);
  }
};

// A float32 tensor in the fake runtime's "device memory" (host memory).
struct Tensor {
  std::vector<int64_t> dims;
  std::vector<float> data;
  Tensor(std::vector<int64_t> d, float start = 0.f) : dims(std::move(d)) {
    int64_t n = 1;
    for (int64_t v : dims) n *= v;
    data.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < data.size(); ++i) data[i] = start == 0.f ? 12345.f : start * float(int(i * 7 % 13) - 6);
  }
  Tensor(std::vector<int64_t> d, std::vector<float> values) : dims(std::move(d)), data(std::move(values)) {}
  axon_tensor ref() {
    axon_tensor t{};
    t.data = data.data();
    t.dtype = AXON_FLOAT32;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    return t;
  }
};

inline Result run(Device& d, const char* op, std::vector<axon_tensor> ins, std::vector<axon_tensor> outs,
                  const void* attrs, axon_stream stream = nullptr) {
  axon_kernel_call call{};
  call.struct_size = sizeof call;
  call.op = op;
  call.num_inputs = static_cast<int32_t>(ins.size());
  call.inputs = ins.data();
  call.num_outputs = static_cast<int32_t>(outs.size());
  call.outputs = outs.data();
  call.attrs = attrs;
  call.stream = stream;
  const axon_kernel_fn fn = d.api.get_kernel(d.api.device_ctx, op, AXON_FLOAT32);
  if (fn == nullptr) return {AXON_UNIMPLEMENTED, std::string("no kernel for ") + op};
  axon_error err{};
  return result(fn(d.api.device_ctx, &call, &err), err);
}

inline Result run(Device& d, const char* op, std::vector<Tensor*> in, std::vector<Tensor*> out, const void* attrs) {
  std::vector<axon_tensor> ins, outs;
  for (Tensor* t : in) ins.push_back(t->ref());
  for (Tensor* t : out) outs.push_back(t->ref());
  return run(d, op, ins, outs, attrs);
}

// A float32 tensor too large to allocate here: its data are never read.
inline axon_tensor huge(std::vector<int64_t> dims, uintptr_t at) {
  axon_tensor t{};
  t.data = reinterpret_cast<void*>(at);
  t.dtype = AXON_FLOAT32;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  return t;
}

}  // namespace axon::fake_device
