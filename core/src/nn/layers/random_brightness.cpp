// RandomBrightness: per image a draw u from [lower, upper], the delta
// u (hi - lo) added to every value, which is then clipped to value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

RandomBrightness::RandomBrightness(FactorRange factor, double lo, double hi, std::string name,
                                   std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(lo <= hi)) throw UsageError("RandomBrightness: value_range must not fall");
}

std::unique_ptr<Layer> RandomBrightness::clone() const {
  return std::make_unique<RandomBrightness>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomBrightness::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  write_seed(c);
}

ImageAugmentation::Draw RandomBrightness::draw(Rng& rng) const {
  return {rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper))};
}

void RandomBrightness::transform(const float* in, const Draw& d, float* out) const {
  apply(in, image_size(), d[0], lo_, hi_, out);
}

void RandomBrightness::apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi,
                             float* out) {
  // Keras: the float32 draw times the range's width (a Python float, so
  // taken in double and rounded to float32), then added and clipped.
  const float delta = draw * static_cast<float>(hi - lo);
  data::adjust_brightness(in, size, delta, static_cast<float>(lo), static_cast<float>(hi), out);
}

namespace {
std::unique_ptr<Layer> random_brightness_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = sorted_value_range(l);
  return std::make_unique<RandomBrightness>(factor_range(l, "factor", -1, 1), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomBrightnessEntry{
    "RandomBrightness", random_brightness_from_keras,
    "factor (a number f: the range [-f, f]; each bound in [-1, 1]), value_range, seed; training only"};
const LayerRegistration kRandomBrightnessRegistered(kRandomBrightnessEntry);
}  // namespace
}  // namespace axon::nn
