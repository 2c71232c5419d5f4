// RandomSaturation: per image u from [lower, upper], the saturation of the
// RGB image's HSV form multiplied by u / (1 - u + 1e-7) and clipped to
// value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

RandomSaturation::RandomSaturation(FactorRange factor, double lo, double hi, std::string name,
                                   std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(factor.lower >= -1 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomSaturation: factor must be a range within [-1, 1]");
  if (!(lo <= hi)) throw UsageError("RandomSaturation: value_range must not fall");
}

std::unique_ptr<Layer> RandomSaturation::clone() const {
  return std::make_unique<RandomSaturation>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomSaturation::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

Shape RandomSaturation::output_shape(std::span<const Shape> in) const {
  return rgb_image_shape(ImageAugmentation::output_shape(in));
}

ImageAugmentation::Draw RandomSaturation::draw(Rng& rng) const {
  const float u = rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper));
  return {u / (1.0f - u + 1e-7f)};  // Keras' factor / (1 - factor + epsilon()), in float32
}

void RandomSaturation::transform(const float* in, const Draw& d, float* out) const {
  apply(in, image_size(), d[0], lo_, hi_, out);
}

void RandomSaturation::apply(const float* in, const data::ImageSize& size, float draw, double lo, double hi,
                             float* out) {
  data::adjust_saturation(in, size, draw, static_cast<float>(lo), static_cast<float>(hi), out);
}

namespace {
std::unique_ptr<Layer> random_saturation_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = sorted_value_range(l);
  return std::make_unique<RandomSaturation>(factor_range(l, "factor", -1, 1), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomSaturationEntry{
    "RandomSaturation", random_saturation_from_keras,
    "factor (a number f: the range [-f, f]; each bound in [-1, 1]; 0.5 keeps the image), value_range (the "
    "saturation's clip), seed; RGB images; training only"};
const LayerRegistration kRandomSaturationRegistered(kRandomSaturationEntry);
}  // namespace
}  // namespace axon::nn
