// RandomSharpness: per image u from [lower, upper]; the image blended with
// its 3x3 smoothing by 1 - 2u (blurred below u = 0.5, sharpened above),
// clipped to value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

RandomSharpness::RandomSharpness(FactorRange factor, double lo, double hi, std::string name,
                                 std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(factor.lower >= 0 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomSharpness: factor must be a range within [0, 1]");
  if (!(lo <= hi)) throw UsageError("RandomSharpness: value_range must not fall");
}

std::unique_ptr<Layer> RandomSharpness::clone() const {
  return std::make_unique<RandomSharpness>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomSharpness::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

ImageAugmentation::Draw RandomSharpness::draw(Rng& rng) const {
  return {rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper))};
}

void RandomSharpness::transform(const float* in, const Draw& d, float* out) const {
  // Keras: the float32 draw times 2.
  data::sharpen(in, image_size(), d[0] * 2.0f, static_cast<float>(lo_), static_cast<float>(hi_), out);
}

namespace {
std::unique_ptr<Layer> random_sharpness_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = sorted_value_range(l);
  return std::make_unique<RandomSharpness>(factor_range(l, "factor", 0, 1), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomSharpnessEntry{
    "RandomSharpness", random_sharpness_from_keras,
    "factor (a number f: the range [0, f], or a pair within [0, 1]; 0.5 leaves the image, less blurs, more "
    "sharpens), value_range, seed; training only"};
const LayerRegistration kRandomSharpnessRegistered(kRandomSharpnessEntry);
}  // namespace
}  // namespace axon::nn
