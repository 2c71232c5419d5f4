// Host-side launchers for axon's own pooling kernels (pooling.cu): what cuDNN
// cannot be shown to do exactly as the op table says. Each enqueues on
// `stream` and returns at once; launch errors throw.
#pragma once

#include "pool_math.hpp"

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

// Ints of scratch max_pool_grad needs: one per output element.
int64_t max_pool_grad_scratch(const PoolShape& p);
// MaxPoolGrad as the op table has it: each window's dy goes to the window's
// first maximum of x in row-major order (pool_math.hpp). Gathered per input
// element in window order: deterministic, no atomics.
void max_pool_grad(cudaStream_t s, const PoolShape& p, const float* x, const float* dy, float* dx, int32_t* scratch);

// AvgPool and AvgPoolGrad with TensorFlow's SAME rule: a window averages
// only its taps inside x (pool_math.hpp). cuDNN pads both sides alike, so
// the extra row or column SAME may put after cannot be left out of its count.
void avg_pool(cudaStream_t s, const PoolShape& p, const float* x, float* y);
void avg_pool_grad(cudaStream_t s, const PoolShape& p, const float* dy, float* dx);

}  // namespace axon::cuda::launch
