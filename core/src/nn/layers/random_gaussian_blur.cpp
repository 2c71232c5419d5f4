// RandomGaussianBlur: per image a chance p from [lower, upper] and a
// uniform u; where u < p, the image blurred by Keras' Gaussian kernel, its
// two sigmas drawn once per batch; every image clipped to value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace axon::nn {

RandomGaussianBlur::RandomGaussianBlur(FactorRange factor, std::array<int64_t, 2> kernel_size, FactorRange sigma,
                                       double lo, double hi, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), sigma_(sigma), kernel_size_(kernel_size), lo_(lo),
      hi_(hi) {
  if (!(factor.lower >= 0 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomGaussianBlur: factor must be a range within [0, 1]");
  if (kernel_size[0] < 1 || kernel_size[1] < 1 || kernel_size[0] % 2 == 0 || kernel_size[1] % 2 == 0)
    throw UsageError("RandomGaussianBlur: kernel_size must be odd");
  if (!(std::isfinite(sigma.lower) && std::isfinite(sigma.upper) && sigma.lower <= sigma.upper))
    throw UsageError("RandomGaussianBlur: sigma must be a range of finite numbers");
  if (!(lo < hi)) throw UsageError("RandomGaussianBlur: value_range must rise");
}

std::unique_ptr<Layer> RandomGaussianBlur::clone() const {
  return std::make_unique<RandomGaussianBlur>(factor_, kernel_size_, sigma_, lo_, hi_, name(), keras_seed());
}

void RandomGaussianBlur::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.integers("kernel_size", {kernel_size_[0], kernel_size_[1]});
  write_factor(c, "sigma", sigma_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

ImageAugmentation::Draw RandomGaussianBlur::draw(Rng& rng) const {
  const float p = rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper));
  return {p, rng.uniform01()};
}

std::optional<ImageAugmentation::Draw> RandomGaussianBlur::batch_part(Rng& rng) const {
  const auto lo = static_cast<float>(sigma_.lower), hi = static_cast<float>(sigma_.upper);
  const float s0 = rng.uniform(lo, hi) + 1e-6f;  // Keras' uniform(sigma) + 1e-6, in float32
  return Draw{0, 0, s0, rng.uniform(lo, hi) + 1e-6f};
}

void RandomGaussianBlur::with_batch_part(const Draw& part, Draw& d) const { d[2] = part[2], d[3] = part[3]; }

void RandomGaussianBlur::transform(const float* in, const Draw& d, float* out) const {
  const data::ImageSize size = image_size();
  if (d[1] < d[0])
    data::gaussian_blur(in, size, kernel_size_, {d[2], d[3]}, out);
  else
    std::copy_n(in, size.floats(), out);
  const auto lo = static_cast<float>(lo_), hi = static_cast<float>(hi_);
  for (int64_t i = 0; i < size.floats(); ++i) out[i] = std::min(std::max(out[i], lo), hi);
}

namespace {
// sigma: a number s in [0, 1] means [0, s]; a pair [a, b] is taken as
// Keras takes it (a at most 1, b at least 0; b may pass 1), sorted.
FactorRange sigma_range(const KerasLayerConfig& l) {
  if (!l.has("sigma")) return {0, 1};
  const json& v = l.at("sigma");
  if (v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number()) {
    const double a = v[0].get<double>(), b = v[1].get<double>();
    if (std::isfinite(a) && std::isfinite(b) && a <= 1 && b >= 0) return {std::min(a, b), std::max(a, b)};
  } else if (!v.is_array()) {
    return factor_range(l, "sigma", 0, 1);
  }
  l.fail("sigma is " + json_text(v) + "; Keras takes a number from 0 to 1 or a pair whose first is at most 1 and "
         "second at least 0");
}

std::unique_ptr<Layer> random_gaussian_blur_from_keras(const KerasLayerConfig& l) {
  const FactorRange factor = l.has("factor") ? factor_range(l, "factor", 0, 1) : FactorRange{0, 1};
  const auto kernel = l.pair("kernel_size", 1, limits::kMaxImageSide, {3, 3});
  if (kernel.first % 2 == 0 || kernel.second % 2 == 0)
    l.fail("kernel_size is " + json_text(l.at("kernel_size")) + "; Keras takes odd sizes");
  const auto [lo, hi] = value_range(l);
  if (!(lo < hi)) l.fail("value_range is " + json_text(l.at("value_range")) + "; axon takes a rising pair of numbers");
  return std::make_unique<RandomGaussianBlur>(factor, std::array<int64_t, 2>{kernel.first, kernel.second},
                                              sigma_range(l), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomGaussianBlurEntry{
    "RandomGaussianBlur", random_gaussian_blur_from_keras,
    "factor (the chance of blurring, drawn per image from [0, f] or a pair within [0, 1]; default [0, 1]), "
    "kernel_size (odd, a number or a pair; default 3), sigma (a number s: [0, s]; or a pair; drawn once per batch), "
    "value_range (rising), seed; training only"};
const LayerRegistration kRandomGaussianBlurRegistered(kRandomGaussianBlurEntry);
}  // namespace
}  // namespace axon::nn
