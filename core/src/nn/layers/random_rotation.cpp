// RandomRotation: per image an angle in degrees, turned about the centre
// ((width - 1) / 2, (height - 1) / 2) with Keras' affine matrix in float32.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <cmath>
#include <numbers>

namespace axon::nn {

RandomRotation::RandomRotation(FactorRange factor, TransformFill fill, std::string name, std::optional<int64_t> seed)
    : ProjectiveAugmentation(std::move(name), seed, fill), factor_(factor) {}

std::unique_ptr<Layer> RandomRotation::clone() const {
  return std::make_unique<RandomRotation>(factor_, fill(), name(), keras_seed());
}

void RandomRotation::write_config(KerasConfigWriter& c) const {
  write_factor(c, "factor", factor_);
  write_fill(c);
  write_seed(c);
}

ImageAugmentation::Draw RandomRotation::draw(Rng& rng) const {
  return {rng.uniform(static_cast<float>(factor_.lower * 360.0), static_cast<float>(factor_.upper * 360.0))};
}

data::ProjectiveTransform RandomRotation::matrix(const Draw& d) const {
  const data::ImageSize s = image_size();
  const float angle = d[0] * static_cast<float>(std::numbers::pi / 180.0);
  const float cx = 0.5f * (static_cast<float>(s.width) - 1), cy = 0.5f * (static_cast<float>(s.height) - 1);
  const float c = std::cos(angle), sn = std::sin(angle);
  // Keras' matrix without scale, shear or translation, in its order.
  const float a0 = c, a1 = -sn, b0 = sn, b1 = c;
  return {a0, a1, cx - cx * a0 - cy * a1, b0, b1, cy - cx * b0 - cy * b1, 0, 0};
}

namespace {
std::unique_ptr<Layer> random_rotation_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<RandomRotation>(factor_range(l, "factor", -1, 1), transform_fill(l), l.name(),
                                          keras_seed(l));
}
const LayerEntry kRandomRotationEntry{
    "RandomRotation", random_rotation_from_keras,
    "factor (of 360 degrees), fill_mode, interpolation, fill_value, seed; training only"};
const LayerRegistration kRandomRotationRegistered(kRandomRotationEntry);
}  // namespace
}  // namespace axon::nn
