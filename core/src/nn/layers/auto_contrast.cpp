// AutoContrast: each channel of each image stretched from its own [min, max]
// to the whole value range, in training and at inference (Keras applies it
// whatever `training` says).
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <utility>

namespace axon::nn {

AutoContrast::AutoContrast(double lo, double hi, std::string name)
    : ImageAugmentation(std::move(name), std::nullopt), lo_(lo), hi_(hi) {
  if (!(lo < hi)) throw UsageError("AutoContrast: value_range must hold two different numbers");
}

std::unique_ptr<Layer> AutoContrast::clone() const { return std::make_unique<AutoContrast>(lo_, hi_, name()); }

void AutoContrast::write_config(KerasConfigWriter& c) const {
  c.impl().config["value_range"] = json::array({lo_, hi_});
}

void AutoContrast::infer(const float* in, float* out) const {
  data::auto_contrast(in, image_size(), static_cast<float>(lo_), static_cast<float>(hi_), out);
}

namespace {
std::unique_ptr<Layer> auto_contrast_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = value_range_to_scale(l);
  return std::make_unique<AutoContrast>(lo, hi, l.name());
}
const LayerEntry kAutoContrastEntry{"AutoContrast", auto_contrast_from_keras,
                                    "value_range; in training and inference"};
const LayerRegistration kAutoContrastRegistered(kAutoContrastEntry);
}  // namespace
}  // namespace axon::nn
