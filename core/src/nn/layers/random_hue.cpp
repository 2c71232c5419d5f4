// RandomHue: per image a shift of the hue of the RGB image's HSV form by
// half of f from [lower, upper], up or down with even odds, wrapped into
// [0, 1]; the image taken to [0, 1] and back around it.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <cmath>
#include <utility>

namespace axon::nn {

RandomHue::RandomHue(FactorRange factor, double lo, double hi, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(factor.lower >= 0 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomHue: factor must be a range within [0, 1]");
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo == hi)
    throw UsageError("RandomHue: value_range must be two different finite numbers");
}

std::unique_ptr<Layer> RandomHue::clone() const {
  return std::make_unique<RandomHue>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomHue::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

Shape RandomHue::output_shape(std::span<const Shape> in) const {
  return rgb_image_shape(ImageAugmentation::output_shape(in));
}

ImageAugmentation::Draw RandomHue::draw(Rng& rng) const {
  const float sign = rng.uniform01() > 0.5f ? -1.0f : 1.0f;
  const float f = rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper));
  return {sign * f * 0.5f};
}

void RandomHue::transform(const float* in, const Draw& d, float* out) const {
  apply(in, image_size(), d[0], lo_, hi_, out);
}

void RandomHue::apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi, float* out) {
  data::adjust_hue(in, size, draw, static_cast<float>(lo), static_cast<float>(hi), out);
}

namespace {
std::unique_ptr<Layer> random_hue_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = value_range_to_scale(l, false);
  return std::make_unique<RandomHue>(factor_range(l, "factor", 0, 1), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomHueEntry{
    "RandomHue", random_hue_from_keras,
    "factor (a number f: the range [0, f], each bound in [0, 1]; the hue moves by half the draw, either way), "
    "value_range, seed; RGB images; training only"};
const LayerRegistration kRandomHueRegistered(kRandomHueEntry);
}  // namespace
}  // namespace axon::nn
