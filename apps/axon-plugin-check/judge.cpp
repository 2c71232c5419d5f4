#include "judge.hpp"

#include <axon/function_bounds.hpp>
#include <axon/tolerance.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace axon::plugin_check {

std::string position(const Dims& dims, int64_t i) {
  std::vector<int64_t> at(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    at[k] = dims[k] > 0 ? i % dims[k] : 0;
    i = dims[k] > 0 ? i / dims[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < at.size(); ++k) (s += (k ? "," : "")) += std::to_string(at[k]);
  return s + "]";
}

namespace {

std::string result_text(const Case& c, int index) {
  if (c.op->in_place_inputs > 0) return std::string(c.result_name(index)) + " (updated in place)";
  return "output " + std::to_string(index) + " (" + c.result_name(index) + ")";
}

int32_t label_at(const HostTensor& labels, int64_t row) {
  int32_t v = 0;
  std::memcpy(&v, &labels.bytes[static_cast<size_t>(row) * 4], 4);
  return v;
}

// B of axon/tolerance.hpp's ops rule for element i, as tests/goldens/tf/README.md
// defines it for the loss and Adam.
double magnitude(const Case& c, Rule rule, int index, int64_t i, const HostTensor& want) {
  switch (rule) {
    case Rule::loss:
    case Rule::dlogits: {
      const HostTensor& logits = c.inputs[0];
      const int64_t classes = logits.dims[1];
      const int64_t row = rule == Rule::loss ? i : i / classes;
      const int32_t label = label_at(c.inputs[1], row);
      const double base = std::log2(static_cast<double>(classes)) + 2;
      if (rule == Rule::dlogits) {  // softmax - onehot
        const double onehot = (i % classes) == label ? 1.0 : 0.0;
        return base * std::fabs(double(want.f32()[i]) + onehot) + onehot;
      }
      const float* l = logits.f32() + row * classes;
      double top = l[0];
      for (int64_t k = 1; k < classes; ++k) top = std::max(top, double(l[k]));
      const double at_label = label >= 0 && label < classes ? std::fabs(double(l[label])) : 0.0;
      return base + std::fabs(top) + at_label;
    }
    case Rule::adam_var:
      return std::fabs(double(c.inputs[0].f32()[i])) + 32 * std::fabs(double(c.inputs[0].f32()[i]) - want.f32()[i]);
    case Rule::adam_m: {
      const double b1 = std::get<axon_adam_attrs>(c.attrs).beta_1;
      return std::fabs(b1 * c.inputs[1].f32()[i]) + std::fabs((1 - b1) * c.inputs[3].f32()[i]);
    }
    case Rule::adam_v: {
      const double b2 = std::get<axon_adam_attrs>(c.attrs).beta_2, g = c.inputs[3].f32()[i];
      return std::fabs(b2 * c.inputs[2].f32()[i]) + std::fabs((1 - b2) * g * g);
    }
    case Rule::update: {  // in-place result `index` of an ABI 1.6 op: input `index` before the call
      const float before = c.inputs[static_cast<size_t>(index)].f32()[i];
      const bool has_grad = c.op->id != OpId::ClipGradients && c.op->id != OpId::ApplyWeightDecay;
      const double g = has_grad ? c.inputs.back().f32()[i] : 0.0;
      return std::fabs(double(before)) + 32 * std::fabs(double(before) - want.f32()[i]) + std::fabs(g) + g * g;
    }
    case Rule::keras_loss: {  // the row's scale: its largest result and prediction
      const HostTensor& x = c.inputs[0];
      const int64_t units = x.dims[1], row = want.dims.size() == 1 ? i : i / units;
      double top = 0;
      for (int64_t k = 0; k < units; ++k) top = std::max(top, std::fabs(double(x.f32()[row * units + k])));
      const int64_t per_row = want.dims.size() == 1 ? 1 : units;
      for (int64_t k = 0; k < per_row; ++k) top = std::max(top, std::fabs(double(want.f32()[row * per_row + k])));
      return (std::log2(static_cast<double>(units)) + 2) * (1 + top);
    }
    default: return 0;
  }
}

Verdict judge_bits(const Case& c, int index, const HostTensor& got, const HostTensor& want) {
  Verdict v;
  const size_t width = dtype_size(want.dtype);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want.numel(); ++i)
    if (std::memcmp(&got.bytes[static_cast<size_t>(i) * width], &want.bytes[static_cast<size_t>(i) * width], width)) {
      if (bad++ == 0) first = i;
    }
  if (bad == 0) return v;
  auto value = [&](const HostTensor& t) {
    int64_t x = 0;
    std::memcpy(&x, &t.bytes[static_cast<size_t>(first) * width], width);  // little-endian, any width up to 8
    return static_cast<long long>(x);
  };
  char b[512];
  std::snprintf(b, sizeof b, "%s must equal the reference bit for bit: %lld of %lld elements differ, first at %s: got %lld, want %lld",
                result_text(c, index).c_str(), static_cast<long long>(bad), static_cast<long long>(want.numel()),
                position(want.dims, first).c_str(), value(got), value(want));
  v.ok = false;
  v.detail = b;
  return v;
}

}  // namespace

Verdict judge(const Case& c, int index, const HostTensor& got, const HostTensor& want, const HostTensor* abs_sum,
              double sum_ulps) {
  Verdict v;
  if (got.bytes.size() != want.bytes.size()) {
    v.ok = false;
    v.detail = result_text(c, index) + ": " + std::to_string(got.bytes.size()) + " bytes, the reference's has " +
               std::to_string(want.bytes.size());
    return v;
  }
  if (want.dtype != AXON_FLOAT32) return judge_bits(c, index, got, want);
  const Rule rule = c.rules.at(static_cast<size_t>(index));
  const float* g = got.f32();
  const float* w = want.f32();
  std::vector<double> magnitude_b;  // Rule::function: B of every element
  if (rule == Rule::function) {
    magnitude_b.resize(static_cast<size_t>(want.numel()));
    const HostTensor& in0 = c.inputs.at(0);
    const auto* gelu = std::get_if<axon_gelu_attrs>(&c.attrs);  // Gelu's form; the other functions have none
    tol::function_magnitudes(c.op->id, in0.f32(), c.inputs.size() > 1 ? c.inputs[1].f32() : nullptr, want.numel(),
                             in0.dims.empty() ? 1 : in0.dims.back(), gelu != nullptr && gelu->approximate != 0,
                             magnitude_b.data());
  }
  auto allowed = [&](int64_t i) -> double {
    switch (rule) {
      case Rule::exact: return 0;
      case Rule::sum: return tol::sum_allowed(w[i], abs_sum->f32()[i], sum_ulps);
      case Rule::function: return tol::sum_allowed(w[i], magnitude_b[static_cast<size_t>(i)], sum_ulps);
      case Rule::normal: return 0x1p-22 * std::fabs(double(w[i]));
      default: return tol::ops_allowed(magnitude(c, rule, index, i, want));
    }
  };
  int64_t bad = 0, worst = -1;
  double worst_excess = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double diff = std::fabs(double(g[i]) - double(w[i]));
    const double bound = allowed(i);
    // Equal as floats (-0 == +0) always passes; NaN never does (outputs start as NaN).
    const double excess = g[i] == w[i] ? 0 : std::isnan(diff) ? INFINITY : bound > 0 ? diff / bound : INFINITY;
    if (excess > 1) ++bad;
    if (excess > worst_excess || (excess > 1 && worst < 0)) {
      worst_excess = excess;
      worst = i;
    }
  }
  if (bad == 0) return v;
  char b[640];
  if (rule == Rule::exact)
    std::snprintf(b, sizeof b, "%s must equal the reference: %lld of %lld elements differ, first at %s: got %.9g, want %.9g",
                  result_text(c, index).c_str(), static_cast<long long>(bad), static_cast<long long>(want.numel()),
                  position(want.dims, worst).c_str(), double(g[worst]), double(w[worst]));
  else
    std::snprintf(b, sizeof b,
                  "%s: %lld of %lld elements outside the bound, worst at %s: got %.9g, want %.9g, allowed %.3g "
                  "(the error is %.3g times the bound)",
                  result_text(c, index).c_str(), static_cast<long long>(bad), static_cast<long long>(want.numel()),
                  position(want.dims, worst).c_str(), double(g[worst]), double(w[worst]), allowed(worst), worst_excess);
  v.ok = false;
  v.detail = b;
  return v;
}

}  // namespace axon::plugin_check
