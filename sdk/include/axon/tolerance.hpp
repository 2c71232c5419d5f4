// Element-wise bounds for comparing float32 results with an oracle (the
// reference kernels, TensorFlow's goldens), each with the smallest error it is
// sure to catch: the bounds axon's own tests and axon-plugin-check judge a
// backend by (docs/testing.md). Plain C++, no dependencies.
//
// Sums of products (convolutions and their gradients, MatMul, BiasAddGrad,
// Sum, AddN, MaxPoolGrad where windows overlap, the fused ops):
//
//   |got - want| <= kSumUlps * u * S + u * |want|,   u = 2^-24,
//
// where S is the sum of the magnitudes actually summed into that element
// (the op run on |inputs| by the oracle). The bound does not grow with the
// number of terms: float32 sums of mixed-sign products, blocked or not, stay
// within a few u * S (measured: at most 4.1 u * S for the CPU plugin against
// the reference on every shape of tests/kernels, the CNN's at batch 64
// included, 7.9 in its Winograd F(4x2, 3x3) tiles, and at most 2.4 u * S for
// TensorFlow's own outputs against float64; tests/goldens/tf/README.md).
// Power: any element off by more than 16 u * S + u * |want| fails; at the
// CNN's shapes that is under 0.1% of a typical value, so "one image of the
// batch ignored", "one filter tap missing" and "bias missing" all fail
// (axon's tests/kernels/test_tolerance_power.cpp).
//
// Same-sign sums of many terms (say 10^4 positive products) can exceed this
// in float32 (recursive summation then drifts like sqrt(terms) * u * S); the
// tests feed mixed-sign data, as training does.
#pragma once

#include <cmath>

namespace axon::tol {

constexpr double kUnit = 0x1p-24;  // float32's unit roundoff
constexpr double kSumUlps = 16;

// Allowed |got - want| for one element of a sum of products; abs_sum is S.
inline double sum_allowed(double want, double abs_sum, double ulps = kSumUlps) {
  return ulps * kUnit * abs_sum + kUnit * std::fabs(want) + 1e-30;
}

// For the CUDA plugin: cuDNN may choose Winograd or FFT convolutions, whose
// rounding is not a plain sum's. 64 u * S still catches an error of 0.4% of
// a typical value at the CNN's shapes (one image of 64 ignored is ~12%); not
// yet measured on a GPU.
constexpr double kGpuSumUlps = 64;

// A few float32 operations on values of magnitude `scale` (the loss, Adam's
// results): |got - want| <= kOpsUlps * u * scale. Power: an error of more
// than 8 u times the operands' magnitude; for Adam's var (scale |var| + 32
// |update|, tests/goldens/tf/README.md) that is 8 u |var| plus 1.5e-5 of the
// update, where epsilon moved inside the square root changes the update of
// a small gradient by up to 5%.
constexpr double kOpsUlps = 8;
inline double ops_allowed(double scale) { return kOpsUlps * kUnit * scale + 1e-30; }

}  // namespace axon::tol
