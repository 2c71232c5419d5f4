// Small portable SIMD layer for the loops the auto-vectoriser gets wrong
// (selects it turns into branches, broadcast-FMA kernels): GCC/Clang vector
// extensions of W floats, and AXON_CPU_DISPATCH, which compiles one
// always-inline template body three times (AVX-512 with W=16, AVX2+FMA with
// W=8, baseline x86-64 with W=4) and picks the copy for this CPU once.
// Vectors never cross a call (every helper is always-inline), so the ABI
// notes GCC gives about them (-Wpsabi) are moot; the plugin silences them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace axon::cpu::simd {

template <int W>
struct Vec {
  typedef float f __attribute__((vector_size(4 * W)));
  typedef int32_t i __attribute__((vector_size(4 * W)));
  typedef uint32_t u __attribute__((vector_size(4 * W)));
};

template <class V>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
__attribute__((always_inline)) inline void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// f(T{}, c0) for blocks of channels [c0, c0 + lanes of T) covering [0, c):
// vectors of W floats, then one of W/2 and one of W/4 where they fit, then
// single floats (load and store take T = float too). A channel's lane does
// the same operations whatever its block's width.
template <int W, class F>
__attribute__((always_inline)) inline void for_channel_blocks(int64_t c, F&& f) {
  int64_t c0 = 0;
  for (; c0 + W <= c; c0 += W) f(typename Vec<W>::f{}, c0);
  if constexpr (W >= 8)
    if (c0 + W / 2 <= c) f(typename Vec<W / 2>::f{}, c0), c0 += W / 2;
  if constexpr (W >= 16)
    if (c0 + W / 4 <= c) f(typename Vec<W / 4>::f{}, c0), c0 += W / 4;
  for (; c0 < c; ++c0) f(0.0f, c0);
}

// All lanes = *p. AVX/AVX-512: one vbroadcastss from memory, written as asm
// because GCC's spellings of a splat compile to an add (V{} + x must keep
// -0.0 + 0.0 = +0.0) or to lane-by-lane inserts, and the intrinsics cannot be
// inlined into these target-neutral templates. Four lanes (baseline SSE, and
// the half vectors of narrow outputs under AVX2) are a braced splat, which
// GCC compiles to the instruction set's own broadcast.
template <class V>
__attribute__((always_inline)) inline V broadcast(const float* p) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64) {
    V v;
    asm("vbroadcastss %1, %0" : "=v"(v) : "m"(*p));
    return v;
  } else if constexpr (sizeof(V) == 32) {
    V v;
    asm("vbroadcastss %1, %0" : "=x"(v) : "m"(*p));
    return v;
  }
#endif
  if constexpr (sizeof(V) == 16) {  // a braced splat: one vbroadcastss under AVX, movss+shufps under SSE
    const float x = *p;
    return V{x, x, x, x};
  }
  return V{} + *p;
}

// acc + (all lanes = *p) * b, one multiply-add rounded once: under
// AVX-512 a vfmadd231ps with an embedded broadcast of *p (asm for
// broadcast's reason), elsewhere broadcast's splat and the contracted
// multiply-add. Where each broadcast value feeds one multiply-add, the
// separate vbroadcastss held an AVX-512 EPYC's products to 75% of its
// multiply-add rate (axon-bench-products, 16 x 16: 82 -> 111 GFLOP/s a
// core); the same bits.
template <class V>
__attribute__((always_inline)) inline V fma_broadcast(V acc, const float* p, V b) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64) {
    asm("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(b), "m"(*p));
    return acc;
  }
#endif
  return acc + broadcast<V>(p) * b;
}

// Lane i = p[i % L] (L = 2 or 4 floats repeated across the vector): one
// vbroadcastsd / vbroadcastf128 / vbroadcastf32x4 from memory under AVX and
// AVX-512, asm for broadcast's reason.
template <class V, int L>
__attribute__((always_inline)) inline V broadcast_block(const float* p) {
  static_assert(L == 2 || L == 4);
  V v;
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64 && L == 4) {
    asm("vbroadcastf32x4 %1, %0" : "=v"(v) : "m"(*reinterpret_cast<const float(*)[4]>(p)));
    return v;
  } else if constexpr (sizeof(V) == 32 && L == 2) {
    asm("vbroadcastsd %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const float(*)[2]>(p)));
    return v;
  } else if constexpr (sizeof(V) == 32 && L == 4) {
    asm("vbroadcastf128 %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const float(*)[4]>(p)));
    return v;
  }
#endif
  for (int i = 0; i < int(sizeof(V) / sizeof(float)); ++i) v[i] = p[i % L];
  return v;
}

// All lanes = x, for int32 vectors: one vpbroadcastd from memory. (I{} + x
// trips GCC 12's -Wmaybe-uninitialized when the result lands in an array,
// and a lane-by-lane loop compiles to one masked broadcast per lane.)
template <class V>
__attribute__((always_inline)) inline V splat(int32_t x) {
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64) {
    V v;
    asm("vpbroadcastd %1, %0" : "=v"(v) : "m"(x));
    return v;
  } else if constexpr (sizeof(V) == 32) {
    V v;
    asm("vpbroadcastd %1, %0" : "=x"(v) : "m"(x));
    return v;
  }
#endif
  V v;
  for (size_t i = 0; i < sizeof(V) / sizeof(x); ++i) v[i] = x;
  return v;
}

// Lanes = the bytes p[0 .. lanes), zero-extended (vpmovzxbd). asm for the
// same reason as broadcast, and because GCC 12 compiles
// __builtin_convertvector from bytes to ints into a byte-by-byte shuffle
// through general registers; baseline SSE2 has no such instruction.
template <class V>
__attribute__((always_inline)) inline V widen_bytes(const uint8_t* p) {
  constexpr int lanes = sizeof(V) / 4;
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64) {
    V v;
    asm("vpmovzxbd %1, %0" : "=v"(v) : "m"(*reinterpret_cast<const uint8_t(*)[lanes]>(p)));
    return v;
  } else if constexpr (sizeof(V) == 32) {
    V v;
    asm("vpmovzxbd %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const uint8_t(*)[lanes]>(p)));
    return v;
  }
#endif
  V v;
  for (int i = 0; i < lanes; ++i) v[i] = p[i];
  return v;
}

// p[0 .. lanes) = the low byte of each lane (vpmovdb; the inverse of
// widen_bytes for values < 256). AVX2 has no such instruction: a plain loop.
template <class V>
__attribute__((always_inline)) inline void narrow_to_bytes(uint8_t* p, V v) {
  constexpr int lanes = sizeof(V) / 4;
#if defined(__x86_64__) && defined(__GNUC__)
  if constexpr (sizeof(V) == 64) {
    asm("vpmovdb %1, %0" : "=m"(*reinterpret_cast<uint8_t(*)[lanes]>(p)) : "v"(v));
    return;
  }
#endif
  for (int i = 0; i < lanes; ++i) p[i] = static_cast<uint8_t>(v[i]);
}

// W lanes of double sums of floats, as two native-width halves: GCC keeps a
// single 2W-wide double vector on the stack instead of in registers.
template <int W>
struct DoubleVec {
  typedef double d __attribute__((vector_size(8 * W)));
};
template <int W>
struct DoubleSum {
  using Half = typename Vec<W / 2>::f;
  using D = typename DoubleVec<W / 2>::d;
  D lo{}, hi{};
  DoubleSum() = default;
  explicit DoubleSum(const double* p) {
    std::memcpy(&lo, p, sizeof lo);
    std::memcpy(&hi, p + W / 2, sizeof hi);
  }
  template <class F>
  __attribute__((always_inline)) void add(F v) {
    Half a, b;
    std::memcpy(&a, &v, sizeof a);
    std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof a, sizeof b);
    lo += widen(a);
    hi += widen(b);
  }
  // Each float as a double (exact). GCC converts 8 floats to 8 doubles in
  // quarters, with two extracts and an insert; one vcvtps2pd does it.
  __attribute__((always_inline)) static D widen(Half h) {
#if defined(__x86_64__) && defined(__GNUC__)
    if constexpr (sizeof(Half) == 32 && sizeof(D) == 64) {
      D d;
      asm("vcvtps2pd %1, %0" : "=v"(d) : "x"(h));
      return d;
    }
#endif
    return __builtin_convertvector(h, D);
  }
  void store(double* p) const {
    std::memcpy(p, &lo, sizeof lo);
    std::memcpy(p + W / 2, &hi, sizeof hi);
  }
};

// Vector accumulators a register-blocked loop keeps: 24 of AVX-512's 32
// registers, 12 of the 16 AVX2/SSE have (the rest hold operands).
template <int W>
constexpr int kAccumulators = W == 16 ? 24 : 12;

enum class Isa { base, avx2, avx512 };

// The best the CPU offers, lowered by AXON_CPU_ISA=base|avx2 (tests run the
// kernels once per instruction set this way; it can never raise the level).
inline Isa detect_isa() {
  Isa best = Isa::base;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    best = Isa::avx512;
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    best = Isa::avx2;
#endif
  const char* cap = std::getenv("AXON_CPU_ISA");
  if (cap != nullptr && std::strcmp(cap, "base") == 0) return Isa::base;
  if (cap != nullptr && std::strcmp(cap, "avx2") == 0 && best == Isa::avx512) return Isa::avx2;
  return best;
}

inline const char* isa_name(Isa i) { return i == Isa::avx512 ? "avx512" : i == Isa::avx2 ? "avx2" : "base"; }

inline Isa isa() {
  static const Isa i = detect_isa();
  return i;
}

}  // namespace axon::cpu::simd

// Defines `void name params` calling `name##_body<W> args` compiled for the
// best instruction set this CPU has.
#if defined(__x86_64__) && defined(__GNUC__)
#define AXON_CPU_DISPATCH(name, params, args)                                                          \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))) void name##_avx512 params { \
    name##_body<16> args;                                                                              \
  }                                                                                                    \
  __attribute__((target("avx2,fma"))) void name##_avx2 params { name##_body<8> args; }                \
  void name##_base params { name##_body<4> args; }                                                     \
  void name params {                                                                                   \
    switch (::axon::cpu::simd::isa()) {                                                                \
      case ::axon::cpu::simd::Isa::avx512: return name##_avx512 args;                                  \
      case ::axon::cpu::simd::Isa::avx2: return name##_avx2 args;                                      \
      default: return name##_base args;                                                                \
    }                                                                                                  \
  }
#else
#define AXON_CPU_DISPATCH(name, params, args) \
  void name params { name##_body<4> args; }
#endif
