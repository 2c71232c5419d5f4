// Host-side launchers for axon's own CUDA kernels (elementwise.cu). Each one
// enqueues on `stream` and returns at once; launch errors throw.
#pragma once

#include "activation_math.hpp"
#include "layout_math.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace axon::cuda::launch {

void bias_add(cudaStream_t s, const float* x, const float* bias, float* y, int64_t rows, int64_t cols);
// out[c] = sum over rows of x[r, c]; deterministic two-pass reduction.
int64_t column_sum_scratch(int64_t rows, int64_t cols);  // floats of scratch needed
void column_sum(cudaStream_t s, const float* x, int64_t rows, int64_t cols, float* out, float* scratch);
// out[0] = sum of x; deterministic two-pass reduction.
int64_t sum_scratch(int64_t n);
void sum_all(cudaStream_t s, const float* x, int64_t n, float* out, float* scratch);
// Rows with a label outside [0, classes) get NaN loss and gradients (as TensorFlow's GPU kernel).
void softmax_cross_entropy(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                           float* loss, float* dlogits);
void adam(cudaStream_t s, float* var, float* m, float* v, const float* grad, int64_t n, float lr_t, float beta_1,
          float beta_2, float epsilon);
// TensorFlow's InTopK(V2): fewer than k logits above the label's (ties count; a
// non-finite logit in the row gives 0).
void in_top_k(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes, int k,
              float* correct);
// Keras' accuracy: argmax(logits) == label, ties to the lower index; NaN by the
// CPU plugin's rule (a NaN never wins; a NaN at index 0 is never beaten).
void argmax_accuracy(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                     float* correct);
void fill(cudaStream_t s, float* y, int64_t n, float value);
void scale(cudaStream_t s, const float* x, float* y, int64_t n, float alpha);
// y = x[0] + ... + x[count-1]; `accumulate` adds to y instead. count <= kAddNMax.
constexpr int kAddNMax = 8;
void add_n(cudaStream_t s, const float* const* xs, int count, float* y, int64_t n, bool accumulate);
void normalize_image(cudaStream_t s, const uint8_t* x, float* y, int64_t n);
// y[cols, rows] = transpose of x[rows, cols].
void transpose(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t cols);
// y = x with its axes permuted: y's axis i is x's axis perm[i] (rank <= kMaxPermuteRank).
constexpr int kMaxPermuteRank = 6;
void permute(cudaStream_t s, const float* x, int rank, const int64_t* dims, const int* perm, float* y);
// NHWC window copy: dst[n, h, w, c] = src[n, h + off_h, w + off_w, c], or
// `fill` where that lies outside src. Pads (negative offsets, larger dst) and
// crops (positive offsets, smaller dst).
void window_copy(cudaStream_t s, const float* src, int64_t batch, int64_t src_h, int64_t src_w, int64_t channels,
                 float* dst, int64_t dst_h, int64_t dst_w, int64_t off_h, int64_t off_w, float fill);

// The activations of ABI 1.4 and their gradients (activation_math.hpp):
// y = activate(x); dx = activation_grad(dy, v), v the op's y or x.
void activation(cudaStream_t s, Activation op, const ActivationParams& p, const float* x, float* y, int64_t n);
void activation_grad(cudaStream_t s, Activation op, const ActivationParams& p, const float* dy, const float* v,
                     float* dx, int64_t n);
// y = a op b, elementwise over n.
void binary(cudaStream_t s, Binary op, const float* a, const float* b, float* y, int64_t n);
// MaximumGrad, TensorFlow's rule: da = dy where a >= b, db = dy elsewhere.
void maximum_grad(cudaStream_t s, const float* dy, const float* a, const float* b, float* da, float* db, int64_t n);
// var = momentum * var + weight * value, in place.
void moving_average(cudaStream_t s, float* var, const float* value, int64_t n, float momentum, float weight);
// Softmax over the last dimension of [rows, cols], and its gradient
// dx = (dy - sum(dy * y)) * y; one warp per row, a fixed order.
void softmax(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t cols);
void softmax_grad(cudaStream_t s, const float* dy, const float* y, float* dx, int64_t rows, int64_t cols);
// dst = the window of src, or src placed in zeros (Slice, Pad; layout_math.hpp).
void window(cudaStream_t s, const Window& w, const float* src, float* dst);

// False (with the reason) when this library holds no code the current device can run.
bool have_code_for_current_device(std::string& why);

}  // namespace axon::cuda::launch
