#include "augmentation_config.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace axon::nn {
namespace {

double bounded(const KerasLayerConfig& l, const char* key, const json& v, double lo, double hi) {
  if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
    l.fail(std::string(key) + " is " + json_text(l.at(key)) + "; Keras takes a number or a pair from " +
           json_text(lo) + " to " + json_text(hi));
  return v.get<double>();
}

}  // namespace

FactorRange factor_range(const KerasLayerConfig& l, const char* key, double lo, double hi) {
  if (!l.has(key)) l.fail(std::string("has no ") + key);
  const json& v = l.at(key);
  if (v.is_array() && v.size() == 2) {
    const double a = bounded(l, key, v[0], lo, hi), b = bounded(l, key, v[1], lo, hi);
    return {std::min(a, b), std::max(a, b)};
  }
  const double f = std::fabs(bounded(l, key, v, lo, hi));
  return {std::max(-f, lo), f};
}

void write_factor(KerasConfigWriter& c, const char* key, const FactorRange& f) {
  c.impl().config[key] = json::array({f.lower, f.upper});
}

std::pair<double, double> value_range(const KerasLayerConfig& l) {
  if (!l.has("value_range")) return {0, 255};
  const json& v = l.at("value_range");
  if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() ||
      !std::isfinite(v[0].get<double>()) || !std::isfinite(v[1].get<double>()))
    l.fail("value_range is " + json_text(v) + "; axon takes a pair of finite numbers");
  return {v[0].get<double>(), v[1].get<double>()};
}

std::pair<double, double> sorted_value_range(const KerasLayerConfig& l) {
  const auto [a, b] = value_range(l);
  return {std::min(a, b), std::max(a, b)};
}

std::pair<double, double> value_range_to_scale(const KerasLayerConfig& l, bool sorted) {
  const auto range = sorted ? sorted_value_range(l) : value_range(l);
  if (range.first == range.second) l.fail("value_range holds one number twice; Keras divides by its width");
  return range;
}

TransformFill transform_fill(const KerasLayerConfig& l) {
  TransformFill f;
  const std::string mode = l.string("fill_mode", "reflect");
  if (mode == "reflect")
    f.fill_mode = data::FillMode::reflect;
  else if (mode == "wrap")
    f.fill_mode = data::FillMode::wrap;
  else if (mode == "constant")
    f.fill_mode = data::FillMode::constant;
  else if (mode == "nearest")
    f.fill_mode = data::FillMode::nearest;
  else
    l.fail("fill_mode is \"" + mode + "\"; axon takes reflect, wrap, constant or nearest");
  const std::string interpolation = l.string("interpolation", "bilinear");
  if (interpolation == "bilinear")
    f.interpolation = data::Interpolation::bilinear;
  else if (interpolation == "nearest")
    f.interpolation = data::Interpolation::nearest;
  else
    l.fail("interpolation is \"" + interpolation + "\"; axon takes bilinear or nearest");
  f.fill_value = l.float_number("fill_value", 0.0);
  return f;
}

std::optional<int64_t> keras_seed(const KerasLayerConfig& l) {
  if (!l.has("seed")) return std::nullopt;
  return l.integer(l.at("seed"), "seed", -(int64_t{1} << 62), int64_t{1} << 62);
}

std::pair<int64_t, int64_t> target_size(const KerasLayerConfig& l) {
  for (const char* k : {"height", "width"})
    if (!l.has(k)) l.fail(std::string("has no ") + k);
  const int64_t hi = limits::kMaxModelImageSide;
  return {l.integer(l.at("height"), "height", 1, hi), l.integer(l.at("width"), "width", 1, hi)};
}

Shape rgb_image_shape(const Shape& s) {
  if (s[2] != 3) throw UsageError("needs an RGB image (3 channels), gets " + std::to_string(s[2]) + " channels");
  return s;
}

}  // namespace axon::nn
