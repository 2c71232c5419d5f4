// RandomTranslation: per image a shift of (height fraction x height, width
// fraction x width) pixels, TensorFlow's transform [1, 0, -dx, 0, 1, -dy].
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

namespace axon::nn {

RandomTranslation::RandomTranslation(FactorRange height, FactorRange width, TransformFill fill, std::string name,
                                     std::optional<int64_t> seed)
    : ProjectiveAugmentation(std::move(name), seed, fill), height_(height), width_(width) {}

std::unique_ptr<Layer> RandomTranslation::clone() const {
  return std::make_unique<RandomTranslation>(height_, width_, fill(), name(), keras_seed());
}

void RandomTranslation::write_config(KerasConfigWriter& c) const {
  write_factor(c, "height_factor", height_);
  write_factor(c, "width_factor", width_);
  write_fill(c);
  write_seed(c);
}

ImageAugmentation::Draw RandomTranslation::draw(Rng& rng) const {
  // Keras draws the height's first; the ends as float32, as its uniform takes them.
  const float dy = rng.uniform(static_cast<float>(height_.lower), static_cast<float>(height_.upper));
  return {dy, rng.uniform(static_cast<float>(width_.lower), static_cast<float>(width_.upper))};
}

data::ProjectiveTransform RandomTranslation::matrix(const Draw& d) const {
  const data::ImageSize s = image_size();
  const float dy = d[0] * static_cast<float>(s.height), dx = d[1] * static_cast<float>(s.width);
  return {1, 0, -dx, 0, 1, -dy, 0, 0};
}

namespace {
std::unique_ptr<Layer> random_translation_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<RandomTranslation>(factor_range(l, "height_factor", -1, 1),
                                             factor_range(l, "width_factor", -1, 1), transform_fill(l), l.name(),
                                             keras_seed(l));
}
const LayerEntry kRandomTranslationEntry{
    "RandomTranslation", random_translation_from_keras,
    "height_factor, width_factor, fill_mode, interpolation, fill_value, seed; training only"};
const LayerRegistration kRandomTranslationRegistered(kRandomTranslationEntry);
}  // namespace
}  // namespace axon::nn
