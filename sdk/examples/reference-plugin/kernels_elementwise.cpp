// The reference kernels of the ABI 1.4 activations and their gradients,
// Softmax and its gradient, the elementwise arithmetic, MovingAverage and the
// shape ops (ConcatV2, Slice, Pad). Functions are evaluated in double from
// the float inputs and rounded once, with TensorFlow's definitions (its
// Softplus thresholds, Selu's float constants). Where an op is a float32
// expression in Keras or TensorFlow (Sub, Mul, LeakyRelu, ClippedRelu,
// MovingAverage), that expression is the definition and is computed in
// float, step by step, so a backend that follows it matches bit for bit.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ref {
namespace {

using namespace axon::sdk;

// ------------------------------------------------------------------ helpers

// y[i] = f(x[i]), f in double.
template <class F>
void map1(const KernelCall& c, F f) {
  const float* x = c.input(0).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) y[i] = static_cast<float>(f(double(x[i])));
}

// out[i] = f(in0[i], in1[i]), the op's two inputs in its order, f in double.
template <class F>
void map2(const KernelCall& c, F f) {
  const float* a = c.input(0).data<float>();
  const float* b = c.input(1).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) y[i] = static_cast<float>(f(double(a[i]), double(b[i])));
}

double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Selu's constants as TensorFlow uses them: rounded to float.
const double kSeluScale = static_cast<float>(1.0507009873554804934193349852946);
const double kSeluScaleAlpha = static_cast<float>(1.7580993408473768599402175208123);

// ------------------------------------------------------------------ sigmoid, tanh, elu, selu

void sigmoid(Device&, const KernelCall& c) { map1(c, sigmoid_of); }

void sigmoid_grad(Device&, const KernelCall& c) {
  map2(c, [](double y, double dy) { return dy * y * (1.0 - y); });
}

void tanh(Device&, const KernelCall& c) {
  map1(c, [](double x) { return std::tanh(x); });
}

void tanh_grad(Device&, const KernelCall& c) {
  map2(c, [](double y, double dy) { return dy * (1.0 - y * y); });
}

void elu(Device&, const KernelCall& c) {
  map1(c, [](double x) { return x < 0.0 ? std::expm1(x) : x; });
}

// TensorFlow's EluGrad takes Elu's output: dy where y >= 0, dy * (y + 1) below.
void elu_grad(Device&, const KernelCall& c) {
  map2(c, [](double dy, double y) { return y < 0.0 ? dy * (y + 1.0) : dy; });
}

void selu(Device&, const KernelCall& c) {
  map1(c, [](double x) { return x < 0.0 ? kSeluScaleAlpha * std::expm1(x) : kSeluScale * x; });
}

void selu_grad(Device&, const KernelCall& c) {
  map2(c, [](double dy, double y) { return y < 0.0 ? dy * (y + kSeluScaleAlpha) : dy * kSeluScale; });
}

// ------------------------------------------------------------------ softplus, gelu, silu

// TensorFlow's thresholds: log(float epsilon) + 2 = -13.94, in float. Above
// its negation softplus(x) is x, below it e^x, within float rounding.
const float kSoftplusThreshold = std::log(std::numeric_limits<float>::epsilon()) + 2.0f;

void softplus(Device&, const KernelCall& c) {
  const float* x = c.input(0).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) {
    const double v = x[i];
    const double r = x[i] > -kSoftplusThreshold ? v : x[i] < kSoftplusThreshold ? std::exp(v) : std::log1p(std::exp(v));
    y[i] = static_cast<float>(r);
  }
}

void softplus_grad(Device&, const KernelCall& c) {
  map2(c, [](double dy, double x) { return dy * sigmoid_of(x); });
}

// The tanh form's constants, sqrt(2 / pi) and 0.044715, and sqrt(2 pi).
constexpr double kGeluC = 0.7978845608028654, kGeluA = 0.044715, kSqrt2Pi = 2.5066282746310002;

void gelu(Device&, const KernelCall& c) {
  if (c.attrs<axon_gelu_attrs>().approximate)
    map1(c, [](double x) { return 0.5 * x * (1.0 + std::tanh(kGeluC * (x + kGeluA * x * x * x))); });
  else
    map1(c, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); });
}

// d/dx of x Phi(x) is Phi(x) + x phi(x); of the tanh form 0.5 (1 + t) + 0.5 x (1 - t^2) s'(x).
void gelu_grad(Device&, const KernelCall& c) {
  if (c.attrs<axon_gelu_attrs>().approximate)
    map2(c, [](double dy, double x) {
      const double t = std::tanh(kGeluC * (x + kGeluA * x * x * x));
      return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kGeluC * (1.0 + 3.0 * kGeluA * x * x));
    });
  else
    map2(c, [](double dy, double x) {
      const double phi = std::exp(-0.5 * x * x) / kSqrt2Pi;
      return dy * (0.5 * std::erfc(-x / std::sqrt(2.0)) + x * phi);
    });
}

void silu(Device&, const KernelCall& c) {
  map1(c, [](double x) { return x * sigmoid_of(x); });
}

// sigmoid(x) (1 + x (1 - sigmoid(x))), with 1 - sigmoid(x) = sigmoid(-x).
void silu_grad(Device&, const KernelCall& c) {
  map2(c, [](double dy, double x) { return dy * sigmoid_of(x) * (1.0 + x * sigmoid_of(-x)); });
}

// ------------------------------------------------------------------ piecewise linear

// NaN stays NaN (TensorFlow's Relu6).
void relu6(Device&, const KernelCall& c) {
  map1(c, [](double x) { return x < 0.0 ? 0.0 : x > 6.0 ? 6.0 : x; });
}

void relu6_grad(Device&, const KernelCall& c) {
  map2(c, [](double dy, double x) { return x > 0.0 && x < 6.0 ? dy : 0.0; });
}

// alpha * x is one float product either way.
void leaky_relu(Device&, const KernelCall& c) {
  const double alpha = c.attrs<axon_leaky_relu_attrs>().alpha;
  map1(c, [alpha](double x) { return x > 0.0 ? x : alpha * x; });
}

// x == 0 takes alpha (TensorFlow's LeakyReluGrad: x > 0 ? dy : alpha * dy).
void leaky_relu_grad(Device&, const KernelCall& c) {
  const double alpha = c.attrs<axon_leaky_relu_attrs>().alpha;
  map2(c, [alpha](double dy, double x) { return x > 0.0 ? dy : alpha * dy; });
}

// Keras' relu(x, negative_slope, max_value, threshold) in float:
// min(x, max_value) where x > threshold, else negative_slope * (x - threshold).
void clipped_relu(Device&, const KernelCall& c) {
  const auto& a = c.attrs<axon_clipped_relu_attrs>();
  const float* x = c.input(0).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) {
    const float below = x[i] - a.threshold;
    y[i] = x[i] > a.threshold ? (x[i] < a.max_value ? x[i] : a.max_value) : a.negative_slope * below;
  }
}

void clipped_relu_grad(Device&, const KernelCall& c) {
  const auto& a = c.attrs<axon_clipped_relu_attrs>();
  const float* dy = c.input(0).data<float>();
  const float* x = c.input(1).data<float>();
  float* dx = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i)
    dx[i] = x[i] > a.threshold ? (x[i] < a.max_value ? dy[i] : 0.0f) : a.negative_slope * dy[i];
}

// ------------------------------------------------------------------ softmax

// Over the last dimension: e^(x - max) / sum, in double.
void softmax(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const int64_t classes = x.dim(-1), rows = x.numel() / classes;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  std::vector<double> e(static_cast<size_t>(classes));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = xp + r * classes;
    double mx = row[0];
    for (int64_t j = 1; j < classes; ++j) mx = std::max(mx, double(row[j]));
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j) {
      e[static_cast<size_t>(j)] = std::exp(row[j] - mx);
      sum += e[static_cast<size_t>(j)];
    }
    for (int64_t j = 0; j < classes; ++j) yp[r * classes + j] = static_cast<float>(e[static_cast<size_t>(j)] / sum);
  }
}

// dx = (dy - sum(dy * y)) * y over the last dimension, in double.
void softmax_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  const int64_t classes = dy.dim(-1);
  if (classes == 0) return;
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for (int64_t r = 0; r < dy.numel() / classes; ++r) {
    double s = 0.0;
    for (int64_t j = 0; j < classes; ++j) s += double(g[r * classes + j]) * yp[r * classes + j];
    for (int64_t j = 0; j < classes; ++j) {
      const int64_t i = r * classes + j;
      out[i] = static_cast<float>((g[i] - s) * yp[i]);
    }
  }
}

// ------------------------------------------------------------------ elementwise arithmetic

// One float operation each: computed in float.
void sub(Device&, const KernelCall& c) {
  const float* a = c.input(0).data<float>();
  const float* b = c.input(1).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) y[i] = a[i] - b[i];
}

void mul(Device&, const KernelCall& c) {
  const float* a = c.input(0).data<float>();
  const float* b = c.input(1).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) y[i] = a[i] * b[i];
}

// a where a >= b, else b; NaN from either side (TensorFlow's Maximum).
void maximum(Device&, const KernelCall& c) {
  const float* a = c.input(0).data<float>();
  const float* b = c.input(1).data<float>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) y[i] = a[i] >= b[i] || std::isnan(a[i]) ? a[i] : b[i];
}

// TensorFlow's tie rule: a tie sends the gradient to a.
void maximum_grad(Device&, const KernelCall& c) {
  const float* dy = c.input(0).data<float>();
  const float* a = c.input(1).data<float>();
  const float* b = c.input(2).data<float>();
  float* da = c.output(0).data<float>();
  float* db = c.output(1).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) {
    da[i] = a[i] >= b[i] ? dy[i] : 0.0f;
    db[i] = a[i] >= b[i] ? 0.0f : dy[i];
  }
}

// var = momentum * var + weight * value: each product rounded to float, then
// their float sum (Keras' moving statistics, v * momentum + x * (1 - momentum)).
// A float product is the double product of two floats rounded once.
void moving_average(Device&, const KernelCall& c) {
  const auto& a = c.attrs<axon_moving_average_attrs>();
  float* var = c.input(0).data<float>();
  const float* value = c.input(1).data<float>();
  for (int64_t i = 0; i < c.input(0).numel(); ++i) {
    const float kept = static_cast<float>(double(a.momentum) * var[i]);
    const float added = static_cast<float>(double(a.weight) * value[i]);
    var[i] = kept + added;
  }
}

// ------------------------------------------------------------------ shapes

// Row-major strides of t.
std::vector<int64_t> strides(const TensorRef& t) {
  std::vector<int64_t> s(static_cast<size_t>(t.rank()), 1);
  for (int d = t.rank() - 2; d >= 0; --d) s[static_cast<size_t>(d)] = s[static_cast<size_t>(d + 1)] * t.dim(d + 1);
  return s;
}

// Calls f(small_index, large_index) for every element of `small` placed in
// `large` at `begin` (Slice: small = y; Pad: small = x).
template <class F>
void for_each_placed(const TensorRef& small, const TensorRef& large, const int64_t* begin, F f) {
  const std::vector<int64_t> ls = strides(large);
  std::vector<int64_t> at(static_cast<size_t>(small.rank()), 0);
  for (int64_t i = 0; i < small.numel(); ++i) {
    int64_t j = 0;
    for (int d = 0; d < small.rank(); ++d) j += (begin[d] + at[static_cast<size_t>(d)]) * ls[static_cast<size_t>(d)];
    f(i, j);
    for (int d = small.rank() - 1; d >= 0; --d) {  // the next index, row-major
      if (++at[static_cast<size_t>(d)] < small.dim(d)) break;
      at[static_cast<size_t>(d)] = 0;
    }
  }
}

void slice(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for_each_placed(y, x, c.attrs<axon_slice_attrs>().begin, [&](int64_t i, int64_t j) { yp[i] = xp[j]; });
}

void pad(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = 0.0f;
  for_each_placed(x, y, c.attrs<axon_slice_attrs>().begin, [&](int64_t i, int64_t j) { yp[j] = xp[i]; });
}

// y = the inputs joined along axis: for each index before the axis, each
// input's block of (its extent along axis) x (what follows) in turn.
void concat_v2(Device&, const KernelCall& c) {
  const int axis = c.attrs<axon_concat_attrs>().axis;
  TensorRef y = c.output(0);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= y.dim(d);
  for (int d = axis + 1; d < y.rank(); ++d) inner *= y.dim(d);
  float* yp = y.data<float>();
  int64_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int k = 0; k < c.num_inputs(); ++k) {
      const int64_t block = c.input(k).dim(axis) * inner;
      const float* xp = c.input(k).data<float>() + o * block;
      for (int64_t i = 0; i < block; ++i) yp[at++] = xp[i];
    }
}

}  // namespace

void add_elementwise_kernels(KernelTable& t) {
  using axon::OpId;
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
  add<OpId::Softmax, softmax>(t);
  add<OpId::SoftmaxGrad, softmax_grad>(t);
  add<OpId::Sub, sub>(t);
  add<OpId::Mul, mul>(t);
  add<OpId::Maximum, maximum>(t);
  add<OpId::MaximumGrad, maximum_grad>(t);
  add<OpId::MovingAverage, moving_average>(t);
  add<OpId::ConcatV2, concat_v2>(t);
  add<OpId::Slice, slice>(t);
  add<OpId::Pad, pad>(t);
}

}  // namespace ref
