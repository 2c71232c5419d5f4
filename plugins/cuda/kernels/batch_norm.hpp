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
// biased variance (reserve_space_1, reserve_space_2). side_input (or null):
// added to y (_FusedBatchNormAddEx); then relu: y = max(y, 0)
// (_FusedBatchNormEx, _FusedBatchNormAddEx).
void batch_norm_training(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                         const float* offset, const float* old_mean, const float* old_variance, float epsilon,
                         float factor, bool relu, const float* side_input, float* y, float* batch_mean,
                         float* batch_variance, float* saved_mean, float* saved_variance, void* scratch);
// FusedBatchNormV3 in inference: y from the given mean and variance.
void batch_norm_inference(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                          const float* offset, const float* mean, const float* variance, float epsilon, bool relu,
                          const float* side_input, float* y, void* scratch);
// FusedBatchNormGradV3: dx, scale_backprop, offset_backprop. relu_y: relu's
// output (_FusedBatchNormGradEx: dy counts only where it is positive), or null.
// side_input_backprop (_FusedBatchNormAddGradEx), or null: written with that
// dy (masked, or dy itself) by the sums' pass, which dx's pass then reads.
void batch_norm_grad(cudaStream_t s, const float* dy, const float* relu_y, float* side_input_backprop, const float* x,
                     int64_t rows, int64_t cols, const float* scale, const float* mean, const float* variance,
                     float epsilon, bool training, float* dx, float* scale_backprop, float* offset_backprop,
                     void* scratch);

}  // namespace axon::cuda::launch
