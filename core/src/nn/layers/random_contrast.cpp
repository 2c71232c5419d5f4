// RandomContrast: per image a factor from [1 - lower, 1 + upper], applied
// around each channel's mean and clipped to value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

namespace axon::nn {

RandomContrast::RandomContrast(FactorRange factor, float lo, float hi, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor), lo_(lo), hi_(hi) {
  if (!(lo < hi)) throw UsageError("RandomContrast: value_range must rise");
}

std::unique_ptr<Layer> RandomContrast::clone() const {
  return std::make_unique<RandomContrast>(factor_, lo_, hi_, name(), keras_seed());
}

void RandomContrast::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  c.impl().config["value_range"] = json::array({lo_, hi_});
  write_seed(c);
}

ImageAugmentation::Draw RandomContrast::draw(Rng& rng) const {
  return {rng.uniform(static_cast<float>(1 - factor_.lower), static_cast<float>(1 + factor_.upper))};
}

void RandomContrast::transform(const float* in, const Draw& d, float* out) const {
  apply(in, image_size(), d[0], lo_, hi_, out);
}

void RandomContrast::apply(const float* in, const data::ImageSize& size, float draw, float lo, float hi, float* out) {
  data::adjust_contrast(in, size, draw, lo, hi, out);
}

namespace {
std::unique_ptr<Layer> random_contrast_from_keras(const KerasLayerConfig& l) {
  float lo = 0, hi = 255;
  if (l.has("value_range")) {
    const json& v = l.at("value_range");
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number() ||
        !(v[0].get<double>() < v[1].get<double>()))
      l.fail("value_range is " + json_text(v) + "; axon takes a rising pair of numbers");
    lo = v[0].get<float>(), hi = v[1].get<float>();
  }
  return std::make_unique<RandomContrast>(factor_range(l, "factor", 0, 1), lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomContrastEntry{
    "RandomContrast", random_contrast_from_keras,
    "factor (a number f: the range [0, f], as Keras 3), value_range, seed; training only"};
const LayerRegistration kRandomContrastRegistered(kRandomContrastEntry);
}  // namespace
}  // namespace axon::nn
