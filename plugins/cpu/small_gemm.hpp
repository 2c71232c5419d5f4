// Register-blocked broadcast-FMA GEMMs, compiled for AVX-512 / AVX2 /
// baseline (simd.hpp), for two cases OpenBLAS handles poorly:
//  - a short inner dimension (K below ~32, e.g. the first convolution of an
//    image model, K = 9), where OpenBLAS spends more time packing than
//    multiplying;
//  - convolutions whose rows are read straight from the image (Gather): no
//    im2col copy and no packing, the filter [K, OC] streamed from L2.
#pragma once

#include <cstdint>

namespace axon::cpu {

// Below this K, dense (im2col'd) rows also go to small_k_gemm, not sgemm.
constexpr int64_t kSmallK = 32;

// y[rows, n] = a[rows, k] * b[k, n] (all row-major, dense).
void small_k_gemm(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* y);

// out[k, n] = a^T[k, rows] * b[rows, n] (a is [rows, k], b is [rows, n]).
void small_k_gemm_tn(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* out);

// The same with a's rows gathered straight from an image (a convolution
// without an im2col copy): a[r, p] = x[base[r] + off[p]].
struct Gather {
  const float* x;
  const int64_t* base;
  const int32_t* off;
};
void small_k_conv(const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* y);
void small_k_conv_tn(const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out);

}  // namespace axon::cpu
