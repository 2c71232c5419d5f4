// One logical CPU device: host memory (64-byte aligned, counted), its share of
// the cores as a thread pool, and scratch buffers reused across kernel calls
// so that a training step allocates nothing.
#pragma once

#include "thread_pool.hpp"

#include <axon/host_memory_device.hpp>
#include <axon/plugin.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace axon::cpu {

// A growable 64-byte aligned float buffer (huge pages from a megabyte up:
// axon/host_blocks.hpp); keeps its capacity.
class Scratch {
 public:
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() { release(); }
  float* get(size_t floats);

 private:
  void release() noexcept;

  float* p_ = nullptr;
  size_t cap_ = 0;
};

// Host memory (sdk::HostMemoryDevice), the machine's RAM as its total; a
// pool of threads and scratch for the kernels.
class CpuDevice final : public axon::sdk::HostMemoryDevice {
 public:
  // memory_total: the machine's RAM, reported in memory_info (0 if unknown).
  CpuDevice(int logical_index, int threads, uint64_t memory_total);

  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override;
  const char* const* list_ops() override;

  ThreadPool& pool() { return pool_; }
  // Held while a kernel runs (sdk::validated_kernel): one kernel at a time.
  std::unique_lock<std::mutex> kernel_scope() { return std::unique_lock<std::mutex>(kernel_mu_); }
  int threads() const { return pool_.size(); }
  // Per-thread scratch (thread t of the pool uses slot t only).
  float* scratch(int t, size_t floats) { return scratch_[static_cast<size_t>(t)].get(floats); }
  // Scratch shared by all threads of one kernel call (per-chunk partial sums).
  float* partials(size_t floats) { return partials_.get(floats); }
  double* partials_f64(size_t doubles) { return reinterpret_cast<double*>(partials_.get(2 * doubles)); }
  // Scratch for a convolution's tap offsets (one call at a time).
  int32_t* taps(size_t n) { return reinterpret_cast<int32_t*>(taps_.get(n)); }
  // A second per-thread scratch, for a fused kernel's intermediate tile while
  // the kernels it calls use scratch(t).
  float* tile(int t, size_t floats) { return tiles_[static_cast<size_t>(t)].get(floats); }
  // A whole intermediate tensor of a fused kernel (one call at a time).
  float* intermediate(size_t floats) { return intermediate_.get(floats); }

 private:
  ThreadPool pool_;
  std::vector<Scratch> scratch_, tiles_;
  Scratch partials_, taps_, intermediate_;
  std::mutex kernel_mu_;  // one kernel at a time (kernel_scope)
};

}  // namespace axon::cpu
