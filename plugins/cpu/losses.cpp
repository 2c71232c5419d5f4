// Keras 3's losses of ABI 1.7 (plugin_abi.h gives each formula) and
// binary_accuracy. Batches are small (N x C, C the model's output units), so
// each runs on the calling thread: elementwise steps in float32 as Keras'
// TensorFlow ops round them, sums over a row in double.
#include "device.hpp"
#include "kernels.hpp"

#include <axon/keras_numbers.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace axon::cpu {
namespace {

// Keras' epsilon and 1 - epsilon as the float32 constants TensorFlow clips with.
const float kEps = 1e-7f;
const float kOneMinusEps = static_cast<float>(1.0 - 1e-7);

void check_labels(const KernelCall& c, int32_t lo, int64_t hi) {
  const int32_t* lb = c.input(1).data<int32_t>();
  for (int64_t i = 0; i < c.input(1).numel(); ++i)
    AXON_CHECK(lb[i] >= lo && lb[i] < hi, "%s: label %d at index %lld is outside [%d, %lld)", c.op(), lb[i],
               static_cast<long long>(i), lo, static_cast<long long>(hi));
}

float sign(float x) { return x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f; }

void categorical_crossentropy(CpuDevice&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  const int64_t n = x.dim(0), k = x.dim(1);
  check_labels(c, 0, k);
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const float on = sdk::keras_one_minus(a.label_smoothing), off = a.label_smoothing / static_cast<float>(k);
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  std::vector<float> dp(static_cast<size_t>(k));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = xp + i * k;
    float* gi = g + i * k;
    auto target = [&](int64_t j) { return (j == lb[i] ? on : 0.0f) + off; };
    if (a.from_logits) {
      const float mx = *std::max_element(row, row + k);
      double se = 0.0;
      for (int64_t j = 0; j < k; ++j) se += std::exp(double(row[j]) - mx);
      const double log_se = std::log(se);
      double l = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        l += double(target(j)) * (log_se - (double(row[j]) - mx));
        gi[j] = static_cast<float>(std::exp(double(row[j]) - mx) / se) - target(j);
      }
      lo[i] = static_cast<float>(l);
      continue;
    }
    // p = x / sum(x), q = clip(p): the gradient reaches p only inside the
    // clip's range, then x through the division.
    double sum = 0.0;
    for (int64_t j = 0; j < k; ++j) sum += row[j];
    const float s = static_cast<float>(sum);
    double l = 0.0, dot = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const float p = row[j] / s, q = std::clamp(p, kEps, kOneMinusEps);
      l -= double(target(j) * std::log(q));
      dp[j] = p >= kEps && p <= kOneMinusEps ? -target(j) / q : 0.0f;
      dot += double(dp[j]) * p;
    }
    for (int64_t j = 0; j < k; ++j) gi[j] = static_cast<float>((double(dp[j]) - dot) / s);
    lo[i] = static_cast<float>(l);
  }
}

void binary_crossentropy(CpuDevice&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  check_labels(c, 0, 2);
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const float on = sdk::keras_one_minus(a.label_smoothing), half = static_cast<float>(0.5 * double(a.label_smoothing));
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for (int64_t i = 0; i < x.dim(0); ++i) {
    const float t = static_cast<float>(lb[i]) * on + half, v = xp[i];
    if (a.from_logits) {
      // TensorFlow's max(x, 0) - x t + log1p(exp(-|x|)) and its gradient
      // term by term, where(x >= 0) choosing each side: sigmoid(x) - t.
      const float e = std::exp(-std::abs(v)), s = e / (1.0f + e);
      lo[i] = (std::max(v, 0.0f) - v * t) + std::log1p(e);
      g[i] = v >= 0 ? (1.0f - t) - s : (0.0f - t) + s;
      continue;
    }
    const float q = std::clamp(v, kEps, kOneMinusEps);
    lo[i] = -(t * std::log(q) + (1.0f - t) * std::log(1.0f - q));
    g[i] = v >= kEps && v <= kOneMinusEps ? -t / q + (1.0f - t) / (1.0f - q) : 0.0f;
  }
}

void regression_loss(CpuDevice&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  const int64_t n = x.dim(0), k = x.dim(1);
  if (k > 1) check_labels(c, 0, k);
  const auto& a = c.attrs<axon_regression_loss_attrs>();
  const float delta = a.delta, kf = static_cast<float>(k);
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    double l = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const float t = k == 1 ? static_cast<float>(lb[i]) : (j == lb[i] ? 1.0f : 0.0f), e = xp[i * k + j] - t;
      float li = 0, gi = 0;
      if (a.loss == AXON_LOSS_MEAN_SQUARED_ERROR) {
        li = e * e, gi = 2.0f * e;
      } else if (a.loss == AXON_LOSS_MEAN_ABSOLUTE_ERROR) {
        li = std::abs(e), gi = sign(e);
      } else if (std::abs(e) <= delta) {
        li = 0.5f * (e * e), gi = e;
      } else {
        li = delta * std::abs(e) - 0.5f * (delta * delta), gi = delta * sign(e);
      }
      l += li;
      g[i * k + j] = gi / kf;
    }
    lo[i] = static_cast<float>(l / double(k));
  }
}

void binary_accuracy(CpuDevice&, const KernelCall& c) {
  const float* xp = c.input(0).data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* o = c.output(0).data<float>();
  const float threshold = c.attrs<axon_binary_accuracy_attrs>().threshold;
  for (int64_t i = 0; i < c.input(0).dim(0); ++i)
    o[i] = (xp[i] > threshold ? 1.0f : 0.0f) == static_cast<float>(lb[i]) ? 1.0f : 0.0f;
}

}  // namespace

void add_loss_kernels(sdk::KernelTable& t) {
  add<OpId::CategoricalCrossentropy, categorical_crossentropy>(t);
  add<OpId::BinaryCrossentropy, binary_crossentropy>(t);
  add<OpId::RegressionLoss, regression_loss>(t);
  add<OpId::BinaryAccuracy, binary_accuracy>(t);
}

}  // namespace axon::cpu
