// Float32 exp, expm1, log1p, tanh, the logistic function and the normal
// distribution's tail for the activation kernels, on simd.hpp's vectors of
// any width. Polynomials evaluated with plain multiplies and adds: the files
// that use them are compiled with -ffp-contract=off (CMakeLists.txt), so no
// multiply-add is ever fused, every lane runs the same operations in the
// same order, and the AVX-512, AVX2 and baseline copies give bit-identical
// results (the kernels run a loop's tail through one padded vector too).
//
// Accuracy against double, measured on 4 Mi points of each function's range
// at every instruction set: exp 1.4 ulp, expm1 (x <= 0) 1.6, tanh 2.3, the
// logistic function 2.9, log1p (0..1) 3.8, the normal tail 5.6 ulp times
// (1 + x^2): its erfc approximation, t exp(P(t) - z^2) with t = 1 / (1 +
// z / 2), takes the rounding of its float argument, which erfc's slope
// multiplies by about x^2 (axon/function_bounds.hpp allows for it).
#pragma once

#include <cstdint>
#include <cstring>

#define AXON_VMATH_INLINE __attribute__((always_inline)) inline

namespace axon::cpu::vmath {

// The int32 vector of F's width (a comparison's result type).
template <class F>
using Bits = decltype(F{} < F{});

template <class To, class From>
AXON_VMATH_INLINE To bit_cast(From v) {
  static_assert(sizeof(To) == sizeof(From));
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}

// All lanes = c (never -0: F{} + -0.0f is +0).
template <class F>
AXON_VMATH_INLINE F splat(float c) {
  return F{} + c;
}

template <class F>
AXON_VMATH_INLINE F abs(F x) {
  return x < 0.0f ? -x : x;
}

// 2^n for integer lanes n in [-126, 127], as a float.
template <class F>
AXON_VMATH_INLINE F pow2(Bits<F> n) {
  return bit_cast<F>((n + 127) << 23);
}

// e^x. x is clamped to [-104, 89] first (e^-104 is below the smallest
// denormal, e^89 above FLT_MAX), n = round(x / ln 2) is found with the 1.5 *
// 2^23 trick, r = x - n ln 2 in two steps (Cody and Waite: n * 0.693359375
// is exact), e^r from Cephes' expf polynomial, and 2^n applied as two exact
// power-of-two factors, so that overflow gives inf and a denormal result is
// rounded once. NaN stays NaN.
template <class F>
AXON_VMATH_INLINE F exp(F x) {
  using B = Bits<F>;
  x = x < -104.0f ? splat<F>(-104.0f) : x;
  x = x > 89.0f ? splat<F>(89.0f) : x;
  const F k = x * 1.44269504088896341f + 12582912.0f;
  const F n = k - 12582912.0f;
  const B ni = bit_cast<B>(k) - bit_cast<B>(splat<F>(12582912.0f));  // n as an integer (two's complement)
  F r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const F z = r * r;
  F p = splat<F>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * z + r + 1.0f;
  const B h = ni >> 1;  // arithmetic shift: floor(n / 2)
  return p * pow2<F>(h) * pow2<F>(ni - h);
}

// e^x - 1 for x <= 0 (the negative side of Elu and Selu): Taylor's series to
// x^11 on [-0.7, 0], where e^x - 1 would lose bits to cancellation; e^x - 1
// below, where it is at most -0.5.
template <class F>
AXON_VMATH_INLINE F expm1_negative(F x) {
  F q = splat<F>(1.0f / 39916800.0f);
  q = q * x + 1.0f / 3628800.0f;
  q = q * x + 1.0f / 362880.0f;
  q = q * x + 1.0f / 40320.0f;
  q = q * x + 1.0f / 5040.0f;
  q = q * x + 1.0f / 720.0f;
  q = q * x + 1.0f / 120.0f;
  q = q * x + 1.0f / 24.0f;
  q = q * x + 1.0f / 6.0f;
  q = q * x + 0.5f;
  const F series = x + (x * x) * q;
  return x > -0.7f ? series : exp(x) - 1.0f;
}

// log(1 + e) for e in [0, 1]: 2 atanh(s) with s = e / (2 + e) in [0, 1/3],
// its odd series to s^15.
template <class F>
AXON_VMATH_INLINE F log1p_unit(F e) {
  const F s = e / (e + 2.0f);
  const F z = s * s;
  F q = splat<F>(1.0f / 15.0f);
  q = q * z + 1.0f / 13.0f;
  q = q * z + 1.0f / 11.0f;
  q = q * z + 1.0f / 9.0f;
  q = q * z + 1.0f / 7.0f;
  q = q * z + 1.0f / 5.0f;
  q = q * z + 1.0f / 3.0f;
  q = q * z + 1.0f;
  return (s + s) * q;
}

// The logistic function 1 / (1 + e^-x), from e = e^-|x| so that neither
// side loses bits: 1 / (1 + e) for x >= 0, e / (1 + e) below.
template <class F>
AXON_VMATH_INLINE F sigmoid(F x) {
  const F e = exp(-abs(x));
  return (x >= 0.0f ? splat<F>(1.0f) : e) / (e + 1.0f);
}

// sigmoid(x) and sigmoid(-x) = 1 - sigmoid(x), the second without the
// cancellation of 1 - sigmoid(x).
template <class F>
AXON_VMATH_INLINE void sigmoid_pair(F x, F& pos, F& neg) {
  const F e = exp(-abs(x));
  const F d = e + 1.0f;
  const F big = 1.0f / d, small = e / d;
  pos = x >= 0.0f ? big : small;
  neg = x >= 0.0f ? small : big;
}

// tanh: Cephes' tanhf. |x| < 0.625: x + x^3 P(x^2); else 1 - 2 / (e^2|x| + 1)
// with x's sign (e^2|x| overflowing to inf gives 1).
template <class F>
AXON_VMATH_INLINE F tanh(F x) {
  const F ax = abs(x);
  const F z = x * x;
  F p = splat<F>(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const F small = p * z * x + x;
  const F big = 1.0f - 2.0f / (exp(ax + ax) + 1.0f);
  return ax < 0.625f ? small : (x < 0.0f ? -big : big);
}

// Q(a) = P(X > a) for a standard normal X and a >= 0, i.e. erfc(a / sqrt 2)
// / 2, with erfc(z) = t exp(P(t) - z^2), t = 1 / (1 + z / 2) (the form of
// Numerical Recipes' erfcc). P is a least-squares fit in double on z in
// [0, 10.5], in powers of t - 1/2 (small coefficients: little rounding in
// float); within 0.2 ulp of erfc before float rounding.
template <class F>
AXON_VMATH_INLINE F normal_tail(F a) {
  const F z = a * 0.707106781186547524f;
  const F t = 1.0f / (z * 0.5f + 1.0f);
  const F w = t - 0.5f;
  F p = splat<F>(-0.140614718f);
  p = p * w + 0.261281759f;
  p = p * w - 0.0107720569f;
  p = p * w - 0.293146789f;
  p = p * w + 0.109316699f;
  p = p * w + 0.282174706f;
  p = p * w - 0.157810211f;
  p = p * w - 0.375163466f;
  p = p * w + 0.189370722f;
  p = p * w + 1.34528649f;
  p = p * w - 0.671794057f;
  return (t * 0.5f) * exp(p - z * z);
}

// Phi(x) = P(X <= x), the standard normal distribution function.
template <class F>
AXON_VMATH_INLINE F normal_cdf(F x) {
  const F q = normal_tail(abs(x));
  return x >= 0.0f ? 1.0f - q : q;
}

}  // namespace axon::cpu::vmath
