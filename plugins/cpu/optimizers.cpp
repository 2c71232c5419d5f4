// Keras 3's optimizers of ABI 1.6 (plugin_abi.h): each update one pass over
// the flat buffers, with Keras' float32 operations in Keras' order. This file
// is compiled without FMA contraction, so the AVX-512, AVX2 and baseline
// copies round alike (and like Keras' separate TensorFlow ops). Norms for
// the clipping are summed in double over fixed chunks, as Sum is.
#include "device.hpp"
#include "elementwise.hpp"
#include "flush_denormals.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <axon/keras_numbers.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace axon::cpu {
namespace {

// The update loops below are plain loops the compiler vectorises for each
// instruction set; the branches on attributes are outside them.

template <int W>
__attribute__((always_inline)) inline void sgd_loop_body(float lr, float momentum, bool nesterov, float* __restrict var,
                                                         float* __restrict vel, const float* __restrict g, int64_t n) {
  if (momentum == 0) {
    for (int64_t i = 0; i < n; ++i) var[i] -= g[i] * lr;
  } else if (nesterov) {
    for (int64_t i = 0; i < n; ++i) {
      const float m = vel[i] * momentum - g[i] * lr;
      vel[i] = m;
      var[i] += m * momentum - g[i] * lr;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const float m = vel[i] * momentum - g[i] * lr;
      vel[i] = m;
      var[i] += m;
    }
  }
}
AXON_CPU_DISPATCH(sgd_loop,
                  (float lr, float momentum, bool nesterov, float* var, float* vel, const float* g, int64_t n),
                  (lr, momentum, nesterov, var, vel, g, n))

void apply_sgd(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_sgd_attrs>();
  float* var = c.input(0).data<float>();
  float* vel = c.input(1).data<float>();
  const float* g = c.input(2).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    sgd_loop(a.learning_rate, a.momentum, a.nesterov != 0, var + b, vel + b, g + b, e - b);
  });
}

struct RmspropStep {
  float lr, rho, one_minus_rho, momentum, eps;
};

template <int W>
__attribute__((always_inline)) inline void rmsprop_loop_body(const RmspropStep& s, bool centered, float* __restrict var,
                                                             float* __restrict vel, float* __restrict mom,
                                                             float* __restrict avg, const float* __restrict g,
                                                             int64_t n) {
  // Keras: velocity = rho v + (1 - rho) g^2; the denominator sqrt(v + eps), or
  // centered sqrt(v - avg^2 + eps); increment = lr g / denominator.
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float v = s.rho * vel[i] + s.one_minus_rho * (gi * gi);
    vel[i] = v;
    float denominator;
    if (centered) {
      const float av = s.rho * avg[i] + s.one_minus_rho * gi;
      avg[i] = av;
      denominator = v - av * av + s.eps;
    } else {
      denominator = v + s.eps;
    }
    const float increment = (s.lr * gi) / std::sqrt(denominator);
    if (s.momentum > 0) {
      const float m = s.momentum * mom[i] + increment;
      mom[i] = m;
      var[i] -= m;
    } else {
      var[i] -= increment;
    }
  }
}
AXON_CPU_DISPATCH(rmsprop_loop,
                  (const RmspropStep& s, bool centered, float* var, float* vel, float* mom, float* avg, const float* g,
                   int64_t n),
                  (s, centered, var, vel, mom, avg, g, n))

void apply_rmsprop(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_rmsprop_attrs>();
  const RmspropStep s{a.learning_rate, a.rho, sdk::keras_one_minus(a.rho), a.momentum, a.epsilon};
  float* var = c.input(0).data<float>();
  float* vel = c.input(1).data<float>();
  float* mom = c.input(2).data<float>();
  float* avg = c.input(3).data<float>();
  const float* g = c.input(4).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    rmsprop_loop(s, a.centered != 0, var + b, vel + b, mom + b, avg + b, g + b, e - b);
  });
}

struct AdamStep {
  float alpha, one_minus_b1, one_minus_b2, eps;
};

template <int W>
__attribute__((always_inline)) inline void amsgrad_loop_body(const AdamStep& s, float* __restrict var,
                                                             float* __restrict m, float* __restrict v,
                                                             float* __restrict vhat, const float* __restrict g,
                                                             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * s.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * s.one_minus_b2;
    const float hi = std::max(vhat[i], vi);
    m[i] = mi;
    v[i] = vi;
    vhat[i] = hi;
    var[i] -= (mi * s.alpha) / (std::sqrt(hi) + s.eps);
  }
}
AXON_CPU_DISPATCH(amsgrad_loop,
                  (const AdamStep& s, float* var, float* m, float* v, float* vhat, const float* g, int64_t n),
                  (s, var, m, v, vhat, g, n))

// Keras: alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t) in float32.
void apply_adam_with_amsgrad(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_adam_attrs>();
  const float t = static_cast<float>(a.step);
  const float alpha = a.learning_rate * std::sqrt(1.0f - std::pow(a.beta_2, t)) / (1.0f - std::pow(a.beta_1, t));
  const AdamStep s{alpha, sdk::keras_one_minus(a.beta_1), sdk::keras_one_minus(a.beta_2), a.epsilon};
  float* var = c.input(0).data<float>();
  float* m = c.input(1).data<float>();
  float* v = c.input(2).data<float>();
  float* vhat = c.input(3).data<float>();
  const float* g = c.input(4).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    amsgrad_loop(s, var + b, m + b, v + b, vhat + b, g + b, e - b);
  });
}

template <int W>
__attribute__((always_inline)) inline void adagrad_loop_body(float lr, float eps, float* __restrict var,
                                                             float* __restrict acc, const float* __restrict g,
                                                             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float ai = acc[i] + gi * gi;
    acc[i] = ai;
    var[i] -= (lr * gi) / std::sqrt(ai + eps);
  }
}
AXON_CPU_DISPATCH(adagrad_loop, (float lr, float eps, float* var, float* acc, const float* g, int64_t n),
                  (lr, eps, var, acc, g, n))

void apply_adagrad(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_adagrad_attrs>();
  float* var = c.input(0).data<float>();
  float* acc = c.input(1).data<float>();
  const float* g = c.input(2).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    adagrad_loop(a.learning_rate, a.epsilon, var + b, acc + b, g + b, e - b);
  });
}

struct NadamStep {
  float lr, one_minus_b1, one_minus_b2, eps;
  float u_t1, m_scale_t1;          // u_{t+1} and 1 - u_product * u_{t+1}
  float one_minus_u_t, m_scale_t;  // 1 - u_t and 1 - u_product
  float v_scale;                   // 1 - beta_2^t
};

template <int W>
__attribute__((always_inline)) inline void nadam_loop_body(const NadamStep& s, float* __restrict var,
                                                           float* __restrict m, float* __restrict v,
                                                           const float* __restrict g, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * s.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * s.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    const float m_hat = (s.u_t1 * mi) / s.m_scale_t1 + (s.one_minus_u_t * gi) / s.m_scale_t;
    const float v_hat = vi / s.v_scale;
    var[i] -= (m_hat * s.lr) / (std::sqrt(v_hat) + s.eps);
  }
}
AXON_CPU_DISPATCH(nadam_loop, (const NadamStep& s, float* var, float* m, float* v, const float* g, int64_t n),
                  (s, var, m, v, g, n))

// Keras' Nadam in float32: u_t = beta_1 (1 - 0.5 * 0.96^t); its beta_1 is a
// float32 tensor there, so 1 - beta_1 is rounded in float32.
void apply_nadam(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_nadam_attrs>();
  const float t = static_cast<float>(a.step), decay = 0.96f;
  const float u_t = a.beta_1 * (1.0f - 0.5f * std::pow(decay, t));
  const float u_t1 = a.beta_1 * (1.0f - 0.5f * std::pow(decay, t + 1.0f));
  NadamStep s{};
  s.lr = a.learning_rate;
  s.one_minus_b1 = 1.0f - a.beta_1;
  s.one_minus_b2 = 1.0f - a.beta_2;
  s.eps = a.epsilon;
  s.u_t1 = u_t1;
  s.m_scale_t1 = 1.0f - a.u_product * u_t1;
  s.one_minus_u_t = 1.0f - u_t;
  s.m_scale_t = 1.0f - a.u_product;
  s.v_scale = 1.0f - std::pow(a.beta_2, t);
  float* var = c.input(0).data<float>();
  float* m = c.input(1).data<float>();
  float* v = c.input(2).data<float>();
  const float* g = c.input(3).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    nadam_loop(s, var + b, m + b, v + b, g + b, e - b);
  });
}

template <int W>
__attribute__((always_inline)) inline void weight_decay_loop_body(float wd, float lr, float* __restrict var,
                                                                  int64_t n) {
  for (int64_t i = 0; i < n; ++i) var[i] -= var[i] * wd * lr;
}
AXON_CPU_DISPATCH(weight_decay_loop, (float wd, float lr, float* var, int64_t n), (wd, lr, var, n))

void apply_weight_decay(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_weight_decay_attrs>();
  float* var = c.input(0).data<float>();
  for_elements(d, c.input(0).numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    weight_decay_loop(a.weight_decay, a.learning_rate, var + b, e - b);
  });
}

template <int W>
__attribute__((always_inline)) inline void scale_loop_body(float* __restrict g, float scale, int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] *= scale;
}
AXON_CPU_DISPATCH(scale_loop, (float* g, float scale, int64_t n), (g, scale, n))

// Keras' clip_by_norm: g * clip / max(norm, clip), the product rounded first.
template <int W>
__attribute__((always_inline)) inline void clip_norm_loop_body(float* __restrict g, float clip, float divisor,
                                                               int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] = (g[i] * clip) / divisor;
}
AXON_CPU_DISPATCH(clip_norm_loop, (float* g, float clip, float divisor, int64_t n), (g, clip, divisor, n))

template <int W>
__attribute__((always_inline)) inline void clip_value_loop_body(float* __restrict g, float clip, int64_t n) {
  for (int64_t i = 0; i < n; ++i) g[i] = std::min(std::max(g[i], -clip), clip);
}
AXON_CPU_DISPATCH(clip_value_loop, (float* g, float clip, int64_t n), (g, clip, n))

// The sum of squares of g[b, e), in double over fixed chunks (any thread count
// gives the same bits), rounded to float as Keras' float32 sum is.
float squared_norm(CpuDevice& d, const float* g, int64_t n) {
  const int64_t chunks = chunk_count(n, kElementwiseChunk);
  if (chunks == 0) return 0.0f;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  for_elements(d, n, [&](int64_t b, int64_t e) {
    double s = 0.0;
    for (int64_t i = b; i < e; ++i) s += double(g[i]) * g[i];
    partial[static_cast<size_t>(b / kElementwiseChunk)] = s;
  });
  double s = 0.0;
  for (double p : partial) s += p;
  return static_cast<float>(s);
}

void clip_gradients(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_clip_attrs>();
  float* g = c.input(0).data<float>();
  const int64_t* ends = c.input(1).data<int64_t>();
  const int64_t n = c.input(0).numel(), segments = c.input(1).numel();
  for (int64_t s = 0, begin = 0; s < segments; begin = ends[s++])
    AXON_CHECK(ends[s] >= begin && ends[s] <= n && (s + 1 < segments || ends[s] == n),
               "%s: segment_ends must rise from 0 to grad's size %lld, got %lld at %lld", c.op(), static_cast<long long>(n), static_cast<long long>(ends[s]), static_cast<long long>(s));
  const float clip = a.clip;
  if (a.mode == AXON_CLIP_VALUE) {
    for_elements(d, n, [&](int64_t b, int64_t e) { clip_value_loop(g + b, clip, e - b); });
    return;
  }
  std::vector<float> squares(static_cast<size_t>(segments));
  for (int64_t s = 0, begin = 0; s < segments; begin = ends[s++])
    squares[static_cast<size_t>(s)] = squared_norm(d, g + begin, ends[s] - begin);
  if (a.mode == AXON_CLIP_NORM) {
    for (int64_t s = 0, begin = 0; s < segments; begin = ends[s++]) {
      const float divisor = std::max(std::sqrt(squares[static_cast<size_t>(s)]), clip);
      float* seg = g + begin;
      for_elements(d, ends[s] - begin, [&](int64_t b, int64_t e) { clip_norm_loop(seg + b, clip, divisor, e - b); });
    }
    return;
  }
  // Keras' clip_by_global_norm: the variables' float32 squared norms summed in
  // order; scale = clip * min(1 / norm, 1 / clip), NaN when the norm is not
  // finite.
  float total = 0.0f;
  for (float q : squares) total += q;
  const float norm = std::sqrt(total);
  const float scale = clip * std::min(1.0f / norm, 1.0f / clip) + (norm - norm);
  for_elements(d, n, [&](int64_t b, int64_t e) { scale_loop(g + b, scale, e - b); });
}

}  // namespace

void add_optimizer_kernels(sdk::KernelTable& t) {
  add<OpId::ApplySGD, apply_sgd>(t);
  add<OpId::ApplyRMSprop, apply_rmsprop>(t);
  add<OpId::ApplyAdamWithAmsgrad, apply_adam_with_amsgrad>(t);
  add<OpId::ApplyAdagrad, apply_adagrad>(t);
  add<OpId::ApplyNadam, apply_nadam>(t);
  add<OpId::ApplyWeightDecay, apply_weight_decay>(t);
  add<OpId::ClipGradients, clip_gradients>(t);
}

}  // namespace axon::cpu
