// Elementwise arithmetic of equal shapes (Sub, Mul, Maximum, MaximumGrad)
// and MovingAverage: one float operation per element (two products and a
// sum for MovingAverage, never fused: -ffp-contract=off, CMakeLists.txt), so
// every instruction set, and the reference, give the same bits.
#include "elementwise.hpp"
#include "kernels.hpp"

namespace axon::cpu {
namespace {

template <class To, class From>
__attribute__((always_inline)) inline To bits(From v) {
  To t;
  std::memcpy(&t, &v, sizeof t);
  return t;
}

enum class Arith { sub, mul, maximum };

template <int W>
__attribute__((always_inline)) inline void arithmetic_body(Arith op, const float* a, const float* b, float* y,
                                                           int64_t n) {
  using F = typename simd::Vec<W>::f;
  switch (op) {
    case Arith::sub: return map_binary<W>([](F u, F v) __attribute__((always_inline)) { return u - v; }, a, b, y, n);
    case Arith::mul: return map_binary<W>([](F u, F v) __attribute__((always_inline)) { return u * v; }, a, b, y, n);
    case Arith::maximum:  // a where a >= b or a is NaN, else b: TensorFlow's Maximum (NaN from either side)
      return map_binary<W>(
          [](F u, F v) __attribute__((always_inline)) {
            // a's NaN-ness from its bits, not a second comparison: GCC 12 turns two
            // combined AVX-512 masks into scalar code. |a| > inf sets bit 31 of t.
            using U = typename simd::Vec<W>::u;
            const F larger = u >= v ? u : v;
            const U ub = bits<U>(u), t = (ub & 0x7fffffffu) + 0x007fffffu, nan = -(t >> 31);
            return bits<F>((bits<U>(larger) & ~nan) | (ub & nan));
          },
          a, b, y, n);
  }
}

AXON_CPU_DISPATCH(arithmetic, (Arith op, const float* a, const float* b, float* y, int64_t n), (op, a, b, y, n))

void run(CpuDevice& d, const KernelCall& c, Arith op) {
  const float* a = c.input(0).data<float>();
  const float* b = c.input(1).data<float>();
  float* y = c.output(0).data<float>();
  for_elements(d, c.output(0).numel(),
               [&](int64_t lo, int64_t hi) { arithmetic(op, a + lo, b + lo, y + lo, hi - lo); });
}

void sub(CpuDevice& d, const KernelCall& c) { run(d, c, Arith::sub); }
void mul(CpuDevice& d, const KernelCall& c) { run(d, c, Arith::mul); }
void maximum(CpuDevice& d, const KernelCall& c) { run(d, c, Arith::maximum); }

// da = dy where a >= b, db = dy where a < b (a tie goes to a, as in TensorFlow).
template <int W>
__attribute__((always_inline)) inline void maximum_grad_loop_body(const float* dy, const float* a, const float* b,
                                                                  float* da, float* db, int64_t n) {
  using F = typename simd::Vec<W>::f;
  const F zero{};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F g = simd::load<F>(dy + i);
    const auto to_a = simd::load<F>(a + i) >= simd::load<F>(b + i);
    simd::store(da + i, to_a ? g : zero);
    simd::store(db + i, to_a ? zero : g);
  }
  for (; i < n; ++i) {
    const float g = dy[i];
    da[i] = a[i] >= b[i] ? g : 0.0f;
    db[i] = a[i] >= b[i] ? 0.0f : g;
  }
}

AXON_CPU_DISPATCH(maximum_grad_loop, (const float* dy, const float* a, const float* b, float* da, float* db, int64_t n),
                  (dy, a, b, da, db, n))

void maximum_grad(CpuDevice& d, const KernelCall& c) {
  const float* dy = c.input(0).data<float>();
  const float* a = c.input(1).data<float>();
  const float* b = c.input(2).data<float>();
  float* da = c.output(0).data<float>();
  float* db = c.output(1).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t lo, int64_t hi) {
    maximum_grad_loop(dy + lo, a + lo, b + lo, da + lo, db + lo, hi - lo);
  });
}

// var = momentum * var + weight * value in place: the two products rounded,
// then their sum (Keras' v * momentum + x * (1 - momentum) in float32).
template <int W>
__attribute__((always_inline)) inline void moving_average_loop_body(float momentum, float weight, float* var,
                                                                    const float* value, int64_t n) {
  using F = typename simd::Vec<W>::f;
  map_binary<W>([momentum, weight](F v, F x) __attribute__((always_inline)) { return v * momentum + x * weight; }, var,
                value, var, n);
}

AXON_CPU_DISPATCH(moving_average_loop, (float momentum, float weight, float* var, const float* value, int64_t n),
                  (momentum, weight, var, value, n))

void moving_average(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_moving_average_attrs>();
  float* var = c.input(0).data<float>();
  const float* value = c.input(1).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t lo, int64_t hi) {
    moving_average_loop(a.momentum, a.weight, var + lo, value + lo, hi - lo);
  });
}

}  // namespace

void add_arithmetic_kernels(sdk::KernelTable& t) {
  add<OpId::Sub, sub>(t);
  add<OpId::Mul, mul>(t);
  add<OpId::Maximum, maximum>(t);
  add<OpId::MaximumGrad, maximum_grad>(t);
  add<OpId::MovingAverage, moving_average>(t);
}

}  // namespace axon::cpu
