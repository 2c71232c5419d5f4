// The CPU plugin's device 0 through the C ABI for the kernel benchmarks, and
// device tensors of random values that live as long as it does.
#pragma once

#include "plugin_harness.hpp"

#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace axon::test {

struct BenchDevice {
  explicit BenchDevice(unsigned seed) : rng(seed) {}

  LoadedPlugin plugin{AXON_CPU_PLUGIN_PATH};
  TestDevice dev{plugin, 0};
  std::mt19937 rng;
  std::vector<std::unique_ptr<DeviceTensor>> keep;

  // A float32 tensor of values uniform in [lo, hi].
  DeviceTensor* uniform(std::vector<int64_t> dims, float lo, float hi) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, AXON_FLOAT32, std::move(dims)));
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(static_cast<size_t>(keep.back()->numel()));
    for (auto& x : v) x = u(rng);
    keep.back()->upload(v);
    return keep.back().get();
  }
};

}  // namespace axon::test
