// Solarization: per image an addition and a threshold drawn from their
// factors' ranges, the upper bound scaled to [0, 255] (Keras' draw); the
// image brightened by the addition and, at or above the threshold, inverted.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

Solarization::Solarization(FactorRange addition, FactorRange threshold, double lo, double hi, std::string name,
                           std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), addition_(addition), threshold_(threshold), lo_(lo), hi_(hi) {
  for (const FactorRange& f : {addition, threshold})
    if (!(f.lower >= 0 && f.lower <= f.upper && f.upper <= 1))
      throw UsageError("Solarization: each factor must be a range within [0, 1]");
  if (!(lo < hi)) throw UsageError("Solarization: value_range must hold two different numbers");
}

std::unique_ptr<Layer> Solarization::clone() const {
  return std::make_unique<Solarization>(addition_, threshold_, lo_, hi_, name(), keras_seed());
}

void Solarization::write_config(KerasConfigWriter& c) const {
  c.impl().config["value_range"] = json::array({lo_, hi_});
  write_factor(c, "addition_factor", addition_);
  write_factor(c, "threshold_factor", threshold_);
  write_seed(c);
}

ImageAugmentation::Draw Solarization::draw(Rng& rng) const {
  // Keras: uniform(minval=lower, maxval=upper * 255), each bound a float32.
  auto from = [&](const FactorRange& f) {
    return rng.uniform(static_cast<float>(f.lower), static_cast<float>(f.upper * 255));
  };
  const float addition = from(addition_);
  return {addition, from(threshold_)};
}

void Solarization::transform(const float* in, const Draw& d, float* out) const {
  data::solarize(in, image_size(), d[0], d[1], static_cast<float>(lo_), static_cast<float>(hi_), out);
}

namespace {
std::unique_ptr<Layer> solarization_from_keras(const KerasLayerConfig& l) {
  auto factor = [&](const char* key) { return l.has(key) ? factor_range(l, key, 0, 1) : FactorRange{0, 0}; };
  const auto [lo, hi] = value_range_to_scale(l);
  return std::make_unique<Solarization>(factor("addition_factor"), factor("threshold_factor"), lo, hi, l.name(),
                                        keras_seed(l));
}
const LayerEntry kSolarizationEntry{
    "Solarization", solarization_from_keras,
    "addition_factor, threshold_factor (each a number f: the range [0, f], or a pair within [0, 1]; drawn from "
    "[lower, upper x 255]; default 0, which inverts every value), value_range, seed; training only"};
const LayerRegistration kSolarizationRegistered(kSolarizationEntry);
}  // namespace
}  // namespace axon::nn
