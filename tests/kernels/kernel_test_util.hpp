// Helpers for the kernel tests: the two plugins under test (paths compiled
// in by CMake), seeded random data, and comparisons with stated tolerances.
#pragma once

#include "plugin_harness.hpp"
#include "tolerance.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace axon::test {

// Loaded once per process and never unloaded, like the runtime does.
inline LoadedPlugin& cpu_plugin() {
  static LoadedPlugin p(AXON_CPU_PLUGIN_PATH);
  return p;
}
inline LoadedPlugin& ref_plugin() {
  static LoadedPlugin p(AXON_REF_PLUGIN_PATH);
  return p;
}
// Device 0 of each; the CPU one with the default thread count (all cores).
inline TestDevice& cpu() {
  static TestDevice d(cpu_plugin(), 0);
  return d;
}
inline TestDevice& ref() {
  static TestDevice d(ref_plugin(), 0);
  return d;
}

inline std::vector<float> random_floats(std::mt19937& rng, size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

inline size_t numel(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (auto d : dims) n *= static_cast<size_t>(d);
  return n;
}

// The fused ops' activation codes.
constexpr int kNone = AXON_ACTIVATION_NONE, kRelu = AXON_ACTIVATION_RELU;

// A convolution's or pooling's output size by TensorFlow's formulas,
// computed here independently of the plugins.
inline int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t dilation, axon_padding pad) {
  const int64_t eff = (k - 1) * dilation + 1;
  return pad == AXON_PADDING_SAME ? (in + stride - 1) / stride : (in - eff + stride) / stride;
}

inline std::string shape_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) (s += (i ? "," : "")) += std::to_string(dims[i]);
  return s + "]";
}

inline std::vector<float> abs_of(std::vector<float> v) {
  for (auto& x : v) x = std::fabs(x);
  return v;
}

// A float tensor given by shape and host values, on a device.
struct HostTensor {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

// Host tensors copied to `dev`, and views of them for run_op.
struct Uploaded {
  std::vector<std::unique_ptr<DeviceTensor>> tensors;
  std::vector<const DeviceTensor*> ptrs;
};
inline Uploaded upload(TestDevice& dev, const std::vector<HostTensor>& inputs) {
  Uploaded u;
  for (const auto& h : inputs) {
    u.tensors.push_back(std::make_unique<DeviceTensor>(dev, AXON_FLOAT32, h.dims));
    u.tensors.back()->upload(h.values);
    u.ptrs.push_back(u.tensors.back().get());
  }
  return u;
}

// Runs a float-only op on `dev` with host inputs; returns the host outputs.
inline std::vector<std::vector<float>> run_host(TestDevice& dev, const char* op, const std::vector<HostTensor>& inputs,
                                                const std::vector<std::vector<int64_t>>& output_dims,
                                                const void* attrs = nullptr) {
  const Uploaded in = upload(dev, inputs);
  std::vector<std::unique_ptr<DeviceTensor>> out;
  std::vector<DeviceTensor*> out_ptrs;
  for (const auto& d : output_dims) {
    out.push_back(std::make_unique<DeviceTensor>(dev, AXON_FLOAT32, d));
    // Poison outputs so a kernel that leaves elements unwritten is caught.
    out.back()->upload(std::vector<float>(numel(d), std::nanf("")));
    out_ptrs.push_back(out.back().get());
  }
  run_op(dev, op, in.ptrs, out_ptrs, attrs);
  std::vector<std::vector<float>> result;
  for (auto& o : out) result.push_back(o->download<float>());
  return result;
}

// Runs an op with (float logits, int32 labels) inputs and float outputs.
inline std::vector<std::vector<float>> run_labels(TestDevice& dev, const char* op, const std::vector<float>& logits,
                                                  int64_t n, int64_t k, const std::vector<int32_t>& labels,
                                                  int outputs) {
  DeviceTensor l(dev, AXON_FLOAT32, {n, k}), lb(dev, AXON_INT32, {n});
  l.upload(logits);
  lb.upload(labels);
  std::vector<std::unique_ptr<DeviceTensor>> outs;
  std::vector<DeviceTensor*> ptrs;
  outs.push_back(std::make_unique<DeviceTensor>(dev, AXON_FLOAT32, std::vector<int64_t>{n}));
  if (outputs == 2) outs.push_back(std::make_unique<DeviceTensor>(dev, AXON_FLOAT32, std::vector<int64_t>{n, k}));
  for (auto& o : outs) ptrs.push_back(o.get());
  run_op(dev, op, {&l, &lb}, ptrs);
  std::vector<std::vector<float>> r;
  for (auto& o : outs) r.push_back(o->download<float>());
  return r;
}

// Runs a float-only op that updates its first input in place (it has no
// outputs); returns that input's values after the call.
inline std::vector<float> run_host_in_place(TestDevice& dev, const char* op, const std::vector<HostTensor>& inputs,
                                            const void* attrs = nullptr) {
  const Uploaded in = upload(dev, inputs);
  run_op(dev, op, in.ptrs, {}, attrs);
  return in.tensors.at(0)->download<float>();
}

// A float32 or uint8 tensor by shape and host values, for ops that mix the
// two (the argmax of _FusedConv2DMaxPool): `values` or `bytes` by dtype.
struct MixedTensor {
  axon_dtype dtype = AXON_FLOAT32;
  std::vector<int64_t> dims;
  std::vector<float> values;
  std::vector<uint8_t> bytes;
};

inline MixedTensor mixed(const HostTensor& h) { return {AXON_FLOAT32, h.dims, h.values, {}}; }
inline MixedTensor mixed_u8(const std::vector<int64_t>& dims, const std::vector<uint8_t>& bytes) {
  return {AXON_UINT8, dims, {}, bytes};
}

// run_host for float32 and uint8 tensors; outputs are given as (dtype, dims).
// Outputs are poisoned (NaN, 0xEE) so unwritten elements show.
inline std::vector<MixedTensor> run_host_mixed(TestDevice& dev, const char* op, const std::vector<MixedTensor>& inputs,
                                               const std::vector<std::pair<axon_dtype, std::vector<int64_t>>>& outputs,
                                               const void* attrs = nullptr) {
  std::vector<std::unique_ptr<DeviceTensor>> in, out;
  std::vector<const DeviceTensor*> in_ptrs;
  std::vector<DeviceTensor*> out_ptrs;
  for (const auto& h : inputs) {
    in.push_back(std::make_unique<DeviceTensor>(dev, h.dtype, h.dims));
    if (h.dtype == AXON_UINT8)
      in.back()->upload(h.bytes);
    else
      in.back()->upload(h.values);
    in_ptrs.push_back(in.back().get());
  }
  for (const auto& [dt, d] : outputs) {
    out.push_back(std::make_unique<DeviceTensor>(dev, dt, d));
    if (dt == AXON_UINT8)
      out.back()->upload(std::vector<uint8_t>(numel(d), 0xEE));
    else
      out.back()->upload(std::vector<float>(numel(d), std::nanf("")));
    out_ptrs.push_back(out.back().get());
  }
  run_op(dev, op, in_ptrs, out_ptrs, attrs);
  std::vector<MixedTensor> result;
  for (size_t i = 0; i < out.size(); ++i) {
    MixedTensor m{outputs[i].first, outputs[i].second, {}, {}};
    if (m.dtype == AXON_UINT8)
      m.bytes = out[i]->download<uint8_t>();
    else
      m.values = out[i]->download<float>();
    result.push_back(std::move(m));
  }
  return result;
}

// Result of comparing a backend's output with the reference's.
struct Comparison {
  bool ok = true;
  size_t worst = 0;
  double worst_excess = 0;  // |got - want| / allowed at the worst element
  std::string report;
};

// Elementwise |got - want| <= allowed(i). NaN anywhere fails.
template <class Allowed>
Comparison compare(const std::vector<float>& got, const std::vector<float>& want, Allowed&& allowed) {
  Comparison c;
  if (got.size() != want.size()) {
    c.ok = false;
    c.report = "size " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    return c;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    double diff = std::fabs(double(got[i]) - double(want[i]));
    double tol = allowed(i);
    double excess = tol > 0 ? diff / tol : (diff > 0 ? INFINITY : 0);
    if (std::isnan(diff)) excess = INFINITY;  // inputs are never NaN here: a NaN is an unwritten output
    if (excess > c.worst_excess || (excess > 1 && c.ok)) {
      c.worst_excess = excess;
      c.worst = i;
    }
    if (excess > 1) c.ok = false;
  }
  std::ostringstream s;
  s.precision(9);
  if (!got.empty())
    s << "worst at " << c.worst << ": got " << got[c.worst] << " want " << want[c.worst] << " allowed " << allowed(c.worst)
      << " (" << c.worst_excess << " of the tolerance)";
  c.report = s.str();
  return c;
}

// Bit-for-bit equality.
inline Comparison compare_exact(const std::vector<float>& got, const std::vector<float>& want) {
  return compare(got, want, [](size_t) { return 0.0; });
}

// With AXON_TEST_SUM_ULPS set, compare_sum prints each comparison's largest
// |got - want| / (u S) to stderr: how docs/testing.md measures the u S its
// kernels keep within (run one test case by name to read its figure).
inline void report_sum_ulps(const std::vector<float>& got, const std::vector<float>& want,
                            const std::vector<float>& abs_sum) {
  if (std::getenv("AXON_TEST_SUM_ULPS") == nullptr || got.size() != want.size() || got.size() != abs_sum.size()) return;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (abs_sum[i] > 0) worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / (tol::kUnit * abs_sum[i]));
  std::fprintf(stderr, "compare_sum: worst %.2f u S over %zu values\n", worst, got.size());
}

// A float32 sum of products against the oracle: tol::sum_allowed per element
// (tests/common/tolerance.hpp says the bound and its power), where abs_sum is
// the same op run by the reference on |inputs|.
inline Comparison compare_sum(const std::vector<float>& got, const std::vector<float>& want,
                              const std::vector<float>& abs_sum) {
  report_sum_ulps(got, want, abs_sum);
  return compare(got, want, [&](size_t i) { return tol::sum_allowed(want[i], abs_sum[i]); });
}

// |got - want| <= rel * (1 + |want|).
inline Comparison compare_rel(const std::vector<float>& got, const std::vector<float>& want, double rel) {
  return compare(got, want, [&](size_t i) { return rel * (1.0 + std::fabs(want[i])); });
}

// A call the validator must refuse: float32 tensors of these shapes, and the
// text its message must hold.
struct BadCall {
  const char* op;
  std::vector<std::vector<int64_t>> in, out;
  const void* attrs;
  const char* message;
};

// Each call on each device: AXON_INVALID_ARGUMENT with the message.
inline void check_refused(const std::vector<BadCall>& bad, std::initializer_list<TestDevice*> devices) {
  for (TestDevice* dev : devices) {
    for (const BadCall& b : bad) {
      INFO(b.op << ": " << b.message);
      std::vector<std::unique_ptr<DeviceTensor>> keep;
      std::vector<axon_tensor> in, out;
      for (const auto& d : b.in) {
        keep.push_back(std::make_unique<DeviceTensor>(*dev, AXON_FLOAT32, d));
        in.push_back(keep.back()->t);
      }
      for (const auto& d : b.out) {
        keep.push_back(std::make_unique<DeviceTensor>(*dev, AXON_FLOAT32, d));
        out.push_back(keep.back()->t);
      }
      axon_kernel_fn fn = dev->api.get_kernel(dev->api.device_ctx, b.op, AXON_FLOAT32);
      REQUIRE(fn != nullptr);
      const axon_kernel_call call{sizeof(axon_kernel_call), b.op, static_cast<int32_t>(in.size()), in.data(),
                                  static_cast<int32_t>(out.size()), out.data(), b.attrs};
      axon_error err{};
      const axon_status status = fn(dev->api.device_ctx, &call, &err);
      INFO("message: " << err.message);
      CHECK(status == AXON_INVALID_ARGUMENT);
      CHECK(std::string(err.message).find(b.message) != std::string::npos);
    }
  }
}

}  // namespace axon::test
