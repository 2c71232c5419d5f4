// RandomInvert: per image a chance p from [lower, upper] and a uniform u;
// where u < p, value_range's second value minus the image (Keras' where()).
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace axon::nn {

RandomInvert::RandomInvert(FactorRange factor, double first, double second, std::string name,
                           std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), first_(first), second_(second) {
  if (!(factor.lower >= 0 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomInvert: factor must be a range within [0, 1]");
  if (!std::isfinite(first) || !std::isfinite(second)) throw UsageError("RandomInvert: value_range must be finite");
}

std::unique_ptr<Layer> RandomInvert::clone() const {
  return std::make_unique<RandomInvert>(factor_, first_, second_, name(), keras_seed());
}

void RandomInvert::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({first_, second_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

ImageAugmentation::Draw RandomInvert::draw(Rng& rng) const {
  const float p = rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper));
  return {p, rng.uniform01()};
}

void RandomInvert::transform(const float* in, const Draw& d, float* out) const {
  if (d[1] < d[0]) return data::invert(in, image_size(), static_cast<float>(second_), out);
  std::copy_n(in, image_size().floats(), out);
}

namespace {
std::unique_ptr<Layer> random_invert_from_keras(const KerasLayerConfig& l) {
  const FactorRange factor = l.has("factor") ? factor_range(l, "factor", 0, 1) : FactorRange{0, 1};
  const auto [first, second] = value_range(l);
  return std::make_unique<RandomInvert>(factor, first, second, l.name(), keras_seed(l));
}
const LayerEntry kRandomInvertEntry{
    "RandomInvert", random_invert_from_keras,
    "factor (the chance of inverting, drawn per image from [0, f] or a pair within [0, 1]; default [0, 1]), "
    "value_range, seed; training only"};
const LayerRegistration kRandomInvertRegistered(kRandomInvertEntry);
}  // namespace
}  // namespace axon::nn
