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

// What happens to each output value as it leaves the registers: y = act(y +
// bias[column]) (the fused ops' epilogue, applied while the tile is in cache).
struct Epilogue {
  const float* bias = nullptr;  // [n], or none
  bool relu = false;
  bool any() const { return bias != nullptr || relu; }
};

// y[rows, n] = ep(y[rows, n]) in place (for products that came from sgemm).
void apply_epilogue(float* y, int64_t rows, int64_t n, const Epilogue& ep);

// Below this K, dense (im2col'd) rows also go to small_k_gemm, not sgemm.
constexpr int64_t kSmallK = 32;

// y[rows, n] = a[rows, k] * b[k, n] (all row-major, dense).
void small_k_gemm(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* y,
                  const Epilogue& ep = {});

// out[k, n] = a^T[k, rows] * b[rows, n] (a is [rows, k], b is [rows, n]);
// accumulate: out += (as small_k_conv_tn's).
void small_k_gemm_tn(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* out,
                     bool accumulate = false);

// The same with a's rows gathered straight from an image (a convolution
// without an im2col copy): a[r, p] = row[r][off[p]], where row[r] is where
// row r's first tap starts (in the image, or in a copy of its pixels) and
// off holds k / run runs of `run` consecutive offsets (a filter row's KW*C
// floats, or a tap's C channels where the columns are dilated).
struct Gather {
  const float* const* row;
  const int32_t* off;
  int64_t k, run;
};
void small_k_conv(const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* y,
                  const Epilogue& ep = {});
// accumulate: out += instead of out = (the sums carry on exactly, so rows
// split over several calls give the bits of one call).
void small_k_conv_tn(const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out,
                     bool accumulate = false);

}  // namespace axon::cpu
