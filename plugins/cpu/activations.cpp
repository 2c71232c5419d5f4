// The ABI 1.4 activations and their gradients, elementwise: one vector loop
// per function (vec_math.hpp's exp, tanh, logistic and normal tail), compiled
// for AVX-512, AVX2 and baseline, in fixed chunks over the device's threads.
// No multiply-add is fused here (-ffp-contract=off, CMakeLists.txt), so the
// three instruction sets give the same bits; the piecewise-linear ones
// (Relu6, LeakyRelu, ClippedRelu and their gradients) are the reference's
// float expressions and match it exactly.
#include "elementwise.hpp"
#include "kernels.hpp"
#include "vec_math.hpp"

#include <cmath>
#include <limits>

namespace axon::cpu {
namespace {

enum class Fn {
  sigmoid,
  sigmoid_grad,
  tanh,
  tanh_grad,
  elu,
  elu_grad,
  selu,
  selu_grad,
  softplus,
  softplus_grad,
  gelu_erf,
  gelu_erf_grad,
  gelu_tanh,
  gelu_tanh_grad,
  silu,
  silu_grad,
  relu6,
  relu6_grad,
  leaky_relu,
  leaky_relu_grad,
  clipped_relu,
  clipped_relu_grad
};

struct Params {
  float alpha = 0;                                // LeakyRelu
  float slope = 0, max_value = 0, threshold = 0;  // ClippedRelu
};

// Selu's constants as TensorFlow rounds them to float.
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
constexpr float kSeluScaleAlpha = 1.7580993408473768599402175208123f;
// Gelu's tanh form: sqrt(2 / pi), 0.044715; and 1 / sqrt(2 pi).
constexpr float kGeluC = 0.7978845608028654f, kGeluA = 0.044715f, kInvSqrt2Pi = 0.3989422804014327f;

// TensorFlow's Softplus switches to x above -threshold and to e^x below
// threshold = log(float epsilon) + 2 = -13.94, computed in float as it does.
float softplus_threshold() {
  static const float t = std::log(std::numeric_limits<float>::epsilon()) + 2.0f;
  return t;
}

#define AXON_LANES __attribute__((always_inline))

// fn over n elements: a, b the op's inputs in its order (b null for one input).
template <int W>
__attribute__((always_inline)) inline void activation_body(Fn fn, const Params& p, float softplus_th, const float* a,
                                                           const float* b, float* y, int64_t n) {
  using F = typename simd::Vec<W>::f;
  namespace vm = vmath;
  const F zero{};
  switch (fn) {
    case Fn::sigmoid: return map_unary<W>([](F x) AXON_LANES { return vm::sigmoid(x); }, a, y, n);
    case Fn::sigmoid_grad:  // dy * y * (1 - y), the product order of TensorFlow's vector loop
      return map_binary<W>([](F yv, F dy) AXON_LANES { return dy * (yv * (1.0f - yv)); }, a, b, y, n);
    case Fn::tanh: return map_unary<W>([](F x) AXON_LANES { return vm::tanh(x); }, a, y, n);
    case Fn::tanh_grad:  // dy * (1 - y^2) as (1 - y)(1 + y): no cancellation near |y| = 1
      return map_binary<W>([](F yv, F dy) AXON_LANES { return dy * ((1.0f - yv) * (1.0f + yv)); }, a, b, y, n);
    case Fn::elu:
      return map_unary<W>([zero](F x) AXON_LANES { return x < zero ? vm::expm1_negative(x) : x; }, a, y, n);
    case Fn::elu_grad:
      return map_binary<W>([zero](F dy, F yv) AXON_LANES { return yv < zero ? dy * (yv + 1.0f) : dy; }, a, b, y, n);
    case Fn::selu:
      return map_unary<W>(
          [zero](F x) AXON_LANES { return x < zero ? kSeluScaleAlpha * vm::expm1_negative(x) : kSeluScale * x; }, a,
          y, n);
    case Fn::selu_grad:
      return map_binary<W>(
          [zero](F dy, F yv) AXON_LANES { return yv < zero ? dy * (yv + kSeluScaleAlpha) : dy * kSeluScale; }, a, b,
          y, n);
    case Fn::softplus:  // x, e^x, or max(x, 0) + log(1 + e^-|x|) between TensorFlow's thresholds
      return map_unary<W>(
          [zero, softplus_th](F x) AXON_LANES {
            const F e = vm::exp(-vm::abs(x));  // e^x where x < threshold < 0
            const F middle = (x > zero ? x : zero) + vm::log1p_unit(e);
            return x > -softplus_th ? x : (x < softplus_th ? e : middle);
          },
          a, y, n);
    case Fn::softplus_grad:
      return map_binary<W>([](F dy, F x) AXON_LANES { return dy * vm::sigmoid(x); }, a, b, y, n);
    case Fn::gelu_erf: return map_unary<W>([](F x) AXON_LANES { return x * vm::normal_cdf(x); }, a, y, n);
    case Fn::gelu_erf_grad:  // dy (Phi(x) + x phi(x))
      return map_binary<W>(
          [](F dy, F x) AXON_LANES {
            const F phi = vm::exp(x * x * -0.5f) * kInvSqrt2Pi;
            return dy * (vm::normal_cdf(x) + x * phi);
          },
          a, b, y, n);
    case Fn::gelu_tanh:  // x (1 + tanh(s)) / 2 = x sigmoid(2 s), s = c (x + a x^3): no cancellation for x < 0
      return map_unary<W>(
          [](F x) AXON_LANES {
            const F s = (x + x * x * x * kGeluA) * kGeluC;
            return x * vm::sigmoid(s + s);
          },
          a, y, n);
    case Fn::gelu_tanh_grad:
      // sigmoid(2s) (1 + 2 x sigmoid(-2s) s'), s' = c (1 + 3 a x^2); written
      // so that huge |x| (where s' overflows) gives 0 or 1, not NaN.
      return map_binary<W>(
          [zero](F dy, F x) AXON_LANES {
            const F s = (x + x * x * x * kGeluA) * kGeluC;
            F pos, neg;
            vm::sigmoid_pair(s + s, pos, neg);
            const F slope = (x * x * (3.0f * kGeluA) + 1.0f) * kGeluC;
            const F term = neg == zero ? zero : x * (neg + neg) * slope;
            return pos == zero ? zero * dy : dy * (pos + pos * term);
          },
          a, b, y, n);
    case Fn::silu: return map_unary<W>([](F x) AXON_LANES { return x * vm::sigmoid(x); }, a, y, n);
    case Fn::silu_grad:  // sigmoid(x) (1 + x sigmoid(-x))
      return map_binary<W>(
          [](F dy, F x) AXON_LANES {
            F pos, neg;
            vm::sigmoid_pair(x, pos, neg);
            return dy * (pos * (x * neg + 1.0f));
          },
          a, b, y, n);
    case Fn::relu6:  // NaN passes through, as in TensorFlow
      return map_unary<W>([zero](F x) AXON_LANES { return x < zero ? zero : (x > 6.0f ? zero + 6.0f : x); }, a, y,
                          n);
    case Fn::relu6_grad:
      // 0 < x < 6 as min(x, 6 - x) > 0: one mask (GCC 12 compiles two ANDed AVX-512 masks to scalar code)
      return map_binary<W>(
          [zero](F dy, F x) AXON_LANES {
            const F gap = 6.0f - x, m = x < gap ? x : gap;
            return m > zero ? dy : zero;
          },
          a, b, y, n);
    case Fn::leaky_relu: {
      const float alpha = p.alpha;
      return map_unary<W>([zero, alpha](F x) AXON_LANES { return x > zero ? x : alpha * x; }, a, y, n);
    }
    case Fn::leaky_relu_grad: {  // x == 0 takes alpha, as in TensorFlow
      const float alpha = p.alpha;
      return map_binary<W>([zero, alpha](F dy, F x) AXON_LANES { return x > zero ? dy : alpha * dy; }, a, b, y, n);
    }
    case Fn::clipped_relu: {
      const Params q = p;
      return map_unary<W>(
          [q](F x) AXON_LANES {
            const F kept = x < q.max_value ? x : F{} + q.max_value;
            return x > q.threshold ? kept : q.slope * (x - q.threshold);
          },
          a, y, n);
    }
    case Fn::clipped_relu_grad: {
      const Params q = p;
      return map_binary<W>(
          [q, zero](F dy, F x) AXON_LANES {
            const F kept = x < q.max_value ? dy : zero;
            return x > q.threshold ? kept : q.slope * dy;
          },
          a, b, y, n);
    }
  }
}

#undef AXON_LANES

AXON_CPU_DISPATCH(activation,
                  (Fn fn, const Params& p, float softplus_th, const float* a, const float* b, float* y, int64_t n),
                  (fn, p, softplus_th, a, b, y, n))

// Runs fn over the call's output, from its one or two inputs.
void run(CpuDevice& d, const KernelCall& c, Fn fn, const Params& p = {}) {
  const float* a = c.input(0).data<float>();
  const float* b = c.num_inputs() > 1 ? c.input(1).data<float>() : nullptr;
  float* y = c.output(0).data<float>();
  const float th = softplus_threshold();
  for_elements(d, c.output(0).numel(), [&](int64_t lo, int64_t hi) {
    activation(fn, p, th, a + lo, b != nullptr ? b + lo : nullptr, y + lo, hi - lo);
  });
}

Params leaky(const KernelCall& c) {
  Params p;
  p.alpha = c.attrs<axon_leaky_relu_attrs>().alpha;
  return p;
}

Params clipped(const KernelCall& c) {
  const auto& a = c.attrs<axon_clipped_relu_attrs>();
  Params p;
  p.slope = a.negative_slope;
  p.max_value = a.max_value;
  p.threshold = a.threshold;
  return p;
}

bool tanh_form(const KernelCall& c) { return c.attrs<axon_gelu_attrs>().approximate != 0; }

void sigmoid(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::sigmoid); }
void sigmoid_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::sigmoid_grad); }
void tanh(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::tanh); }
void tanh_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::tanh_grad); }
void elu(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::elu); }
void elu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::elu_grad); }
void selu(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::selu); }
void selu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::selu_grad); }
void softplus(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::softplus); }
void softplus_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::softplus_grad); }
void gelu(CpuDevice& d, const KernelCall& c) { run(d, c, tanh_form(c) ? Fn::gelu_tanh : Fn::gelu_erf); }
void gelu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, tanh_form(c) ? Fn::gelu_tanh_grad : Fn::gelu_erf_grad); }
void silu(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::silu); }
void silu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::silu_grad); }
void relu6(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::relu6); }
void relu6_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::relu6_grad); }
void leaky_relu(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::leaky_relu, leaky(c)); }
void leaky_relu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::leaky_relu_grad, leaky(c)); }
void clipped_relu(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::clipped_relu, clipped(c)); }
void clipped_relu_grad(CpuDevice& d, const KernelCall& c) { run(d, c, Fn::clipped_relu_grad, clipped(c)); }

}  // namespace

void add_activation_kernels(sdk::KernelTable& t) {
  add<OpId::Sigmoid, sigmoid>(t);
  add<OpId::SigmoidGrad, sigmoid_grad>(t);
  add<OpId::Tanh, tanh>(t);
  add<OpId::TanhGrad, tanh_grad>(t);
  add<OpId::Elu, elu>(t);
  add<OpId::EluGrad, elu_grad>(t);
  add<OpId::Selu, selu>(t);
  add<OpId::SeluGrad, selu_grad>(t);
  add<OpId::Softplus, softplus>(t);
  add<OpId::SoftplusGrad, softplus_grad>(t);
  add<OpId::Gelu, gelu>(t);
  add<OpId::GeluGrad, gelu_grad>(t);
  add<OpId::Silu, silu>(t);
  add<OpId::SiluGrad, silu_grad>(t);
  add<OpId::Relu6, relu6>(t);
  add<OpId::Relu6Grad, relu6_grad>(t);
  add<OpId::LeakyRelu, leaky_relu>(t);
  add<OpId::LeakyReluGrad, leaky_relu_grad>(t);
  add<OpId::ClippedRelu, clipped_relu>(t);
  add<OpId::ClippedReluGrad, clipped_relu_grad>(t);
}

}  // namespace axon::cpu
