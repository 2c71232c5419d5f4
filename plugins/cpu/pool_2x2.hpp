// A 2x2 max pooling window whose four values are in registers (a convolution
// pooled as its outputs leave them): taps in row-major order, a later one
// kept only when strictly larger (the first maximum wins, as MaxPool and
// MaxPoolGrad decide), and under relu no tap, AXON_ARGMAX_NONE, where the
// maximum is not above zero. T: one of simd.hpp's float vectors, or a float.
#pragma once

#include "simd.hpp"

#include <axon/plugin_abi.h>

#include <cstdint>

namespace axon::cpu {

template <class T>
__attribute__((always_inline)) inline void max_pool_2x2(const T (&v)[2][2], bool relu, float* y, uint8_t* argmax) {
  if constexpr (sizeof(T) == sizeof(float)) {
    float best = v[0][0];
    int won = 0;
    for (int k = 1; k < 4; ++k)
      if (v[k / 2][k % 2] > best) best = v[k / 2][k % 2], won = k;
    if (relu && !(best > 0.0f)) won = AXON_ARGMAX_NONE;
    *y = best;
    *argmax = static_cast<uint8_t>(won);
  } else {
    using I = typename simd::Vec<sizeof(T) / 4>::i;
    T best = v[0][0];
    I won = simd::splat<I>(0);
    for (int k = 1; k < 4; ++k) {
      const I more = v[k / 2][k % 2] > best;
      best = more ? v[k / 2][k % 2] : best;
      won = more ? simd::splat<I>(k) : won;
    }
    if (relu) won = best > T{} ? won : simd::splat<I>(AXON_ARGMAX_NONE);
    simd::store<T>(y, best);
    simd::narrow_to_bytes(argmax, won);
  }
}

}  // namespace axon::cpu
