// The CPU plugin's kernel table; each source file registers its own ops.
#pragma once

#include "device.hpp"

#include <axon/plugin.hpp>

#include <mutex>
#include <string>

// Throws AXON_INVALID_ARGUMENT with a printf-style message when `cond` is
// false: for this plugin's own limits and for checks of the data. A macro so
// the message is formatted only on failure.
#define AXON_CHECK(cond, ...) \
  do {                        \
    if (!(cond)) ::axon::sdk::fail(AXON_INVALID_ARGUMENT, ::axon::sdk::format(__VA_ARGS__)); \
  } while (0)

namespace axon::cpu {

using sdk::KernelCall;
using sdk::TensorRef;

// Registers F as op Op's kernel for each dtype the op table keys it by,
// behind the op table's validator (sdk::validated_kernel: counts, dtypes,
// shapes, attributes), so F checks only this plugin's limits and the data. A
// CPU device's "stream" is the calling thread; calls on one device are
// serialised (CpuDevice::kernel_scope: they share its scratch and threads),
// calls on different devices run concurrently.
template <OpId Op, void (*F)(CpuDevice&, const KernelCall&)>
void add(sdk::KernelTable& t) {
  sdk::add_validated<Op, CpuDevice, F>(t);
}

const sdk::KernelTable& kernel_table();

// Rows per chunk of a bias gradient's double sums (BiasAddGrad and every
// fused op that computes one): fixed by the channel count alone, so the sums
// are reproducible and those ops agree bit for bit.
inline int64_t bias_grad_rows_per_chunk(int64_t channels) { return (int64_t{1} << 14) / channels + 1; }

// W^T [oc, k] of W [k, oc], in the device's partials scratch (conv.cpp): a
// product against W^T in the register-blocked kernels, which want it dense.
// Runs on the device's threads: call it before a parallel loop, not in one.
const float* transposed(CpuDevice& d, const float* w, int64_t k, int64_t oc);

// y[0, n) += x[0, n) on the calling thread: AddN's sum of (y, x), the same
// bits on every instruction set (math.cpp).
void add_range(float* y, const float* x, int64_t n);

void add_conv_kernels(sdk::KernelTable& t);       // conv.cpp
void add_conv_pool_kernels(sdk::KernelTable& t);  // conv_pool.cpp
void add_pool_kernels(sdk::KernelTable& t);  // pool.cpp
void add_math_kernels(sdk::KernelTable& t);  // math.cpp
void add_batch_norm_kernels(sdk::KernelTable& t);  // batch_norm.cpp
void add_depthwise_kernels(sdk::KernelTable& t);   // depthwise.cpp
void add_activation_kernels(sdk::KernelTable& t);  // activations.cpp
void add_softmax_kernels(sdk::KernelTable& t);     // softmax.cpp
void add_arithmetic_kernels(sdk::KernelTable& t);  // arithmetic.cpp
void add_shape_kernels(sdk::KernelTable& t);       // shape_ops.cpp
void add_optimizer_kernels(sdk::KernelTable& t);   // optimizers.cpp
void add_loss_kernels(sdk::KernelTable& t);        // losses.cpp
void add_random_kernels(sdk::KernelTable& t);      // random.cpp
void add_reduce_kernels(sdk::KernelTable& t);      // reduce.cpp
void add_layer_norm_kernels(sdk::KernelTable& t);  // layer_norm.cpp

}  // namespace axon::cpu
