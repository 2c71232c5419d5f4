// Host-side launchers for LayerNorm and LayerNormGrad (ABI 2.3, layer_norm.cu)
// over x [rows, k]. A row's sums are taken by its own group of threads (a
// warp up to a block, by k) in double, strided shares combined in a fixed
// tree; the gradient's column sums in double over fixed row chunks, then the
// chunks in order: deterministic, no atomics. Each enqueues on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

// LayerNorm: y [rows, k], and per row mean and inv_std = 1 / sqrt(variance +
// epsilon) [rows]. Nothing for zero rows; k = 0 gives NaN statistics.
void layer_norm(cudaStream_t s, const float* x, int64_t rows, int64_t k, const float* scale, const float* offset,
                float epsilon, float* y, float* mean, float* inv_std);

// Bytes of scratch layer_norm_grad needs for [rows, k].
int64_t layer_norm_grad_scratch_bytes(int64_t rows, int64_t k);

// LayerNormGrad: dx [rows, k], scale_backprop and offset_backprop [k] (zeros
// for zero rows), from the forward's mean and inv_std.
void layer_norm_grad(cudaStream_t s, const float* dy, const float* x, int64_t rows, int64_t k, const float* scale,
                     const float* mean, const float* inv_std, float* dx, float* scale_backprop,
                     float* offset_backprop, void* scratch);

}  // namespace axon::cuda::launch
