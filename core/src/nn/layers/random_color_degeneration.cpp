// RandomColorDegeneration: per image a factor f from [lower, upper]; the RGB
// image moved towards its grey by f (away from it where f < 0), clipped to
// value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

RandomColorDegeneration::RandomColorDegeneration(FactorRange factor, double lo, double hi, std::string name,
                                                 std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(factor.lower >= -1 && factor.lower <= factor.upper && factor.upper <= 1))
    throw UsageError("RandomColorDegeneration: factor must be a range within [-1, 1]");
  if (!(lo <= hi)) throw UsageError("RandomColorDegeneration: value_range must not fall");
}

std::unique_ptr<Layer> RandomColorDegeneration::clone() const {
  return std::make_unique<RandomColorDegeneration>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomColorDegeneration::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

Shape RandomColorDegeneration::output_shape(std::span<const Shape> in) const {
  return rgb_image_shape(ImageAugmentation::output_shape(in));
}

ImageAugmentation::Draw RandomColorDegeneration::draw(Rng& rng) const {
  return {rng.uniform(static_cast<float>(factor_.lower), static_cast<float>(factor_.upper))};
}

void RandomColorDegeneration::transform(const float* in, const Draw& d, float* out) const {
  data::degenerate_color(in, image_size(), d[0], static_cast<float>(lo_), static_cast<float>(hi_), out);
}

namespace {
std::unique_ptr<Layer> random_color_degeneration_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = sorted_value_range(l);
  return std::make_unique<RandomColorDegeneration>(factor_range(l, "factor", -1, 1), lo, hi, l.name(),
                                                   keras_seed(l));
}
const LayerEntry kRandomColorDegenerationEntry{
    "RandomColorDegeneration", random_color_degeneration_from_keras,
    "factor (a number f: the range [-f, f]; each bound in [-1, 1]), value_range, seed; RGB images; training only"};
const LayerRegistration kRandomColorDegenerationRegistered(kRandomColorDegenerationEntry);
}  // namespace
}  // namespace axon::nn
