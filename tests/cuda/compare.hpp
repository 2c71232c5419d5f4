// Shared by the GPU kernel-comparison driver and the GPU benchmark: host
// tensors, random data, running one op on a TestDevice and comparing outputs.
// Plain C++ and the C ABI harness only (no Catch2), so it builds on machines
// that have nothing but a compiler and CUDA.
#pragma once

#include "plugin_harness.hpp"
#include "tolerance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace axon::test {

struct HostTensor {
  axon_dtype dtype = AXON_FLOAT32;
  std::vector<int64_t> dims;
  std::vector<float> f;
  std::vector<int32_t> i32;
  std::vector<uint8_t> u8;

  int64_t numel() const {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
  std::string shape() const {
    std::string s = "[";
    for (size_t k = 0; k < dims.size(); ++k) {
      if (k) s += ',';
      s += std::to_string(dims[k]);
    }
    return s + "]";
  }
  // As floats, whatever the dtype (for comparison).
  std::vector<double> values() const {
    std::vector<double> v;
    if (dtype == AXON_FLOAT32) v.assign(f.begin(), f.end());
    if (dtype == AXON_INT32) v.assign(i32.begin(), i32.end());
    if (dtype == AXON_UINT8) v.assign(u8.begin(), u8.end());
    return v;
  }
};

inline HostTensor uniform(std::mt19937& rng, std::vector<int64_t> dims, float lo = -1.f, float hi = 1.f) {
  HostTensor t;
  t.dims = std::move(dims);
  std::uniform_real_distribution<float> u(lo, hi);
  t.f.resize(t.numel());
  for (auto& x : t.f) x = u(rng);
  return t;
}

inline HostTensor labels(std::mt19937& rng, int64_t n, int classes) {
  HostTensor t;
  t.dtype = AXON_INT32;
  t.dims = {n};
  std::uniform_int_distribution<int> u(0, classes - 1);
  t.i32.resize(n);
  for (auto& x : t.i32) x = u(rng);
  return t;
}

inline HostTensor bytes(std::mt19937& rng, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = AXON_UINT8;
  t.dims = std::move(dims);
  std::uniform_int_distribution<int> u(0, 255);
  t.u8.resize(t.numel());
  for (auto& x : t.u8) x = static_cast<uint8_t>(u(rng));
  return t;
}

inline HostTensor empty_like(axon_dtype dtype, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  // A recognisable junk value: a kernel that leaves part of its output
  // unwritten shows up as a mismatch.
  if (dtype == AXON_FLOAT32) t.f.assign(t.numel(), 12345.f);
  if (dtype == AXON_INT32) t.i32.assign(t.numel(), 12345);
  if (dtype == AXON_UINT8) t.u8.assign(t.numel(), 123);
  return t;
}

inline std::unique_ptr<DeviceTensor> to_device(TestDevice& dev, const HostTensor& h) {
  auto t = std::make_unique<DeviceTensor>(dev, h.dtype, h.dims);
  if (h.dtype == AXON_FLOAT32) t->upload(h.f);
  if (h.dtype == AXON_INT32) t->upload(h.i32);
  if (h.dtype == AXON_UINT8) t->upload(h.u8);
  return t;
}

inline HostTensor to_host(const DeviceTensor& d, const HostTensor& like) {
  HostTensor h = like;
  if (h.dtype == AXON_FLOAT32) h.f = d.download<float>();
  if (h.dtype == AXON_INT32) h.i32 = d.download<int32_t>();
  if (h.dtype == AXON_UINT8) h.u8 = d.download<uint8_t>();
  return h;
}

// Runs op on dev; returns the outputs followed by the inputs as they are after
// the call (ApplyAdam updates its inputs in place).
inline std::vector<HostTensor> run_host(TestDevice& dev, const char* op, const std::vector<HostTensor>& inputs,
                                        const std::vector<HostTensor>& outputs, const void* attrs) {
  std::vector<std::unique_ptr<DeviceTensor>> in, out;
  std::vector<const DeviceTensor*> in_p;
  std::vector<DeviceTensor*> out_p;
  for (const auto& h : inputs) in.push_back(to_device(dev, h)), in_p.push_back(in.back().get());
  for (const auto& h : outputs) out.push_back(to_device(dev, h)), out_p.push_back(out.back().get());
  run_op(dev, op, in_p, out_p, attrs);
  dev.sync();
  std::vector<HostTensor> result;
  for (size_t k = 0; k < out.size(); ++k) result.push_back(to_host(*out[k], outputs[k]));
  for (size_t k = 0; k < in.size(); ++k) result.push_back(to_host(*in[k], inputs[k]));
  return result;
}

struct Diff {
  double max_abs = 0, max_rel = 0;  // rel over elements with |expected| >= 1e-3
  int64_t bad = 0;                  // elements outside atol + rtol * |expected|
  int64_t first_bad = -1;
  double got = 0, want = 0;
};

// A float32 sum of products: |got - want| <= tol::sum_allowed(want, S, ulps)
// per element, S the same op's result on |inputs| (tests/common/tolerance.hpp).
inline Diff compare_sum(const HostTensor& got, const HostTensor& want, const HostTensor& abs_sum, double ulps) {
  Diff d;
  if (got.f.size() != want.f.size() || abs_sum.f.size() != want.f.size()) {
    d.bad = 1;
    d.max_abs = INFINITY;
    return d;
  }
  for (size_t k = 0; k < want.f.size(); ++k) {
    const double e = std::fabs(double(got.f[k]) - double(want.f[k]));
    const double err = std::isnan(e) ? INFINITY : e;
    d.max_abs = std::max(d.max_abs, err);
    if (std::fabs(want.f[k]) >= 1e-3) d.max_rel = std::max(d.max_rel, err / std::fabs(want.f[k]));
    if (!(err <= tol::sum_allowed(want.f[k], abs_sum.f[k], ulps))) {
      if (d.first_bad < 0) d.first_bad = static_cast<int64_t>(k), d.got = got.f[k], d.want = want.f[k];
      ++d.bad;
    }
  }
  return d;
}

inline Diff compare(const HostTensor& got, const HostTensor& want, double atol, double rtol) {
  Diff d;
  auto g = got.values(), w = want.values();
  if (g.size() != w.size()) {
    d.bad = 1;
    d.max_abs = INFINITY;
    return d;
  }
  for (size_t k = 0; k < g.size(); ++k) {
    const double e = std::fabs(g[k] - w[k]);
    const bool nan_mismatch = std::isnan(g[k]) != std::isnan(w[k]);
    const double err = nan_mismatch ? INFINITY : (std::isnan(e) ? 0.0 : e);
    d.max_abs = std::max(d.max_abs, err);
    if (std::fabs(w[k]) >= 1e-3) d.max_rel = std::max(d.max_rel, err / std::fabs(w[k]));
    if (!(err <= atol + rtol * std::fabs(w[k]))) {
      if (d.first_bad < 0) d.first_bad = static_cast<int64_t>(k), d.got = g[k], d.want = w[k];
      ++d.bad;
    }
  }
  return d;
}

}  // namespace axon::test
