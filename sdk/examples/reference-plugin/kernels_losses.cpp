// Naive, obviously correct kernels of the losses ABI 1.7 added (plugin_abi.h
// gives each formula): Keras 3's categorical and binary cross-entropy, mean
// squared and absolute error and Huber, with the gradient of each sample's
// loss, and binary_accuracy. Computed in double from the float32 inputs.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ref {
namespace {

using namespace axon::sdk;

// Keras' epsilon as the float32 constants TensorFlow clips with.
constexpr double kEps = static_cast<float>(1e-7);
constexpr double kOneMinusEps = static_cast<float>(1.0 - 1e-7);

void check_labels(const KernelCall& c, int64_t lo, int64_t hi) {
  const int32_t* lb = c.input(1).data<int32_t>();
  for (int64_t i = 0; i < c.input(1).numel(); ++i)
    require(lb[i] >= lo && lb[i] < hi, format("%s: label %d at index %lld is outside [%lld, %lld)", c.op(), lb[i],
                                              static_cast<long long>(i), static_cast<long long>(lo),
                                              static_cast<long long>(hi)));
}

double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }

void categorical_crossentropy(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  const int64_t n = x.dim(0), k = x.dim(1);
  check_labels(c, 0, k);
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const double s = a.label_smoothing;
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  std::vector<double> t(static_cast<size_t>(k)), dp(static_cast<size_t>(k));
  for (int64_t i = 0; i < n; ++i) {
    const float* row = xp + i * k;
    for (int64_t j = 0; j < k; ++j) t[j] = (j == lb[i] ? 1.0 : 0.0) * (1.0 - s) + s / double(k);
    if (a.from_logits) {
      double mx = row[0];
      for (int64_t j = 1; j < k; ++j) mx = std::max(mx, double(row[j]));
      double se = 0.0;
      for (int64_t j = 0; j < k; ++j) se += std::exp(row[j] - mx);
      const double lse = mx + std::log(se);
      double l = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        l += t[j] * (lse - row[j]);
        g[i * k + j] = static_cast<float>(std::exp(row[j] - lse) - t[j]);
      }
      lo[i] = static_cast<float>(l);
      continue;
    }
    // p = x / sum(x), q = clip(p): the gradient reaches p only inside the
    // clip's range, then x through the division.
    double sum = 0.0;
    for (int64_t j = 0; j < k; ++j) sum += row[j];
    double l = 0.0, dot = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double p = row[j] / sum, q = std::clamp(p, kEps, kOneMinusEps);
      l -= t[j] * std::log(q);
      dp[j] = p >= kEps && p <= kOneMinusEps ? -t[j] / q : 0.0;
      dot += dp[j] * p;
    }
    for (int64_t j = 0; j < k; ++j) g[i * k + j] = static_cast<float>((dp[j] - dot) / sum);
    lo[i] = static_cast<float>(l);
  }
}

void binary_crossentropy(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  check_labels(c, 0, 2);
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for (int64_t i = 0; i < x.dim(0); ++i) {
    const double t = lb[i] * (1.0 - a.label_smoothing) + 0.5 * a.label_smoothing, v = xp[i];
    if (a.from_logits) {
      // TensorFlow's max(x, 0) - x t + log(1 + exp(-|x|)): its gradient is
      // sigmoid(x) - t.
      const double e = std::exp(-std::abs(v));
      lo[i] = static_cast<float>(std::max(v, 0.0) - v * t + std::log1p(e));
      g[i] = static_cast<float>((v >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e)) - t);
      continue;
    }
    const double q = std::clamp(v, kEps, kOneMinusEps);
    lo[i] = static_cast<float>(-(t * std::log(q) + (1.0 - t) * std::log(1.0 - q)));
    g[i] = static_cast<float>(v >= kEps && v <= kOneMinusEps ? -t / q + (1.0 - t) / (1.0 - q) : 0.0);
  }
}

void regression_loss(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), loss = c.output(0), grad = c.output(1);
  const int64_t n = x.dim(0), k = x.dim(1);
  if (k > 1) check_labels(c, 0, k);
  const auto& a = c.attrs<axon_regression_loss_attrs>();
  const double delta = a.delta;
  const float* xp = x.data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    double l = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      const double t = k == 1 ? double(lb[i]) : (j == lb[i] ? 1.0 : 0.0), e = xp[i * k + j] - t;
      double li = 0.0, gi = 0.0;
      switch (a.loss) {
        case AXON_LOSS_MEAN_SQUARED_ERROR: li = e * e, gi = 2.0 * e; break;
        case AXON_LOSS_MEAN_ABSOLUTE_ERROR: li = std::abs(e), gi = sign(e); break;
        case AXON_LOSS_HUBER:
          if (std::abs(e) <= delta) li = 0.5 * e * e, gi = e;
          else li = delta * std::abs(e) - 0.5 * delta * delta, gi = delta * sign(e);
          break;
      }
      l += li;
      g[i * k + j] = static_cast<float>(gi / double(k));
    }
    lo[i] = static_cast<float>(l / double(k));
  }
}

void binary_accuracy(Device&, const KernelCall& c) {
  const float* xp = c.input(0).data<float>();
  const int32_t* lb = c.input(1).data<int32_t>();
  float* o = c.output(0).data<float>();
  const float threshold = c.attrs<axon_binary_accuracy_attrs>().threshold;
  for (int64_t i = 0; i < c.input(0).dim(0); ++i) o[i] = (xp[i] > threshold ? 1.0 : 0.0) == double(lb[i]) ? 1.0f : 0.0f;
}

}  // namespace

void add_loss_kernels(KernelTable& t) {
  using axon::OpId;
  add<OpId::CategoricalCrossentropy, categorical_crossentropy>(t);
  add<OpId::BinaryCrossentropy, binary_crossentropy>(t);
  add<OpId::RegressionLoss, regression_loss>(t);
  add<OpId::BinaryAccuracy, binary_accuracy>(t);
}

}  // namespace ref
