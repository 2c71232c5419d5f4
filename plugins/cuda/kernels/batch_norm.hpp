// Host-side launchers for batch normalization (batch_norm.cu) over x viewed
// as [rows, cols], cols its last dimension. Column sums are taken in double,
// in two passes of a fixed order: deterministic. Each enqueues on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

// Bytes of scratch the launchers below need for [rows, cols].
int64_t batch_norm_scratch_bytes(int64_t rows, int64_t cols);

// FusedBatchNormV3 in training (batch_norm_math.hpp): y, and per column the
// running averages (batch_mean, batch_variance) and the batch's mean and
// biased variance (reserve_space_1, reserve_space_2). relu: y = max(y, 0)
// (_FusedBatchNormEx).
void batch_norm_training(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                         const float* offset, const float* old_mean, const float* old_variance, float epsilon,
                         float factor, bool relu, float* y, float* batch_mean, float* batch_variance,
                         float* saved_mean, float* saved_variance, void* scratch);
// FusedBatchNormV3 in inference: y from the given mean and variance.
void batch_norm_inference(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                          const float* offset, const float* mean, const float* variance, float epsilon, bool relu,
                          float* y, void* scratch);
// FusedBatchNormGradV3: dx, scale_backprop, offset_backprop. relu_y: relu's
// output (_FusedBatchNormGradEx: dy counts only where it is positive), or null.
void batch_norm_grad(cudaStream_t s, const float* dy, const float* relu_y, const float* x, int64_t rows, int64_t cols,
                     const float* scale, const float* mean, const float* variance, float epsilon, bool training,
                     float* dx, float* scale_backprop, float* offset_backprop, void* scratch);

}  // namespace axon::cuda::launch
