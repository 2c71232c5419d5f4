// Host-side launchers for Keras' losses of ABI 1.7 and binary_accuracy
// (losses.cu): one thread per sample (a row is the model's output units, few),
// the row's sums in double. A label out of range gives NaN loss and gradient
// (a kernel cannot report it), as SparseSoftmaxCrossEntropyWithLogits does.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

// The target of class j: (j == label ? on : 0) + off (label smoothing folded in).
struct Crossentropy {
  int from_logits;
  float on, off;
};

void categorical_crossentropy(cudaStream_t s, const Crossentropy& a, const float* x, const int32_t* labels,
                              int64_t rows, int64_t classes, float* loss, float* dx);
void binary_crossentropy(cudaStream_t s, const Crossentropy& a, const float* x, const int32_t* labels, int64_t rows,
                         float* loss, float* dx);
// loss: an axon_regression_loss.
void regression_loss(cudaStream_t s, int loss_kind, float delta, const float* x, const int32_t* labels, int64_t rows,
                     int64_t classes, float* loss, float* dx);
void binary_accuracy(cudaStream_t s, float threshold, const float* x, const int32_t* labels, int64_t rows,
                     float* correct);

}  // namespace axon::cuda::launch
