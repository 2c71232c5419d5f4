// The CPU plugin's kernel table; each source file registers its own ops.
#pragma once

#include "device.hpp"

#include <axon/plugin.hpp>

#include <mutex>

namespace axon::cpu {

// The C entry of a CPU kernel. A CPU device's "stream" is the calling
// thread; calls on one device are serialised (they share its scratch and
// threads), calls on different devices run concurrently.
template <void (*F)(CpuDevice&, const sdk::KernelCall&)>
axon_status cpu_kernel(void* device_ctx, const axon_kernel_call* call, axon_error* err) {
  std::lock_guard<std::mutex> lock(static_cast<CpuDevice*>(device_ctx)->kernel_mutex());
  return sdk::kernel<CpuDevice, F>(device_ctx, call, err);
}

const sdk::KernelTable& kernel_table();

// Rows per chunk of a bias gradient's double sums (BiasAddGrad and every
// fused op that computes one): fixed by the channel count alone, so the sums
// are reproducible and those ops agree bit for bit.
inline int64_t bias_grad_rows_per_chunk(int64_t channels) { return (int64_t{1} << 14) / channels + 1; }

void add_conv_kernels(sdk::KernelTable& t);       // conv.cpp
void add_conv_pool_kernels(sdk::KernelTable& t);  // conv_pool.cpp
void add_pool_kernels(sdk::KernelTable& t);  // pool.cpp
void add_math_kernels(sdk::KernelTable& t);  // math.cpp

}  // namespace axon::cpu
