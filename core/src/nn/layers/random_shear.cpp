// RandomShear: per image an x shear u and a y shear v from their ranges,
// both negated when a coin says so; the output pixel (x, y) reads the input
// at (x + u y, v x + y), Keras' matrix, which shears about the top-left
// corner rather than the centre.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

namespace axon::nn {

RandomShear::RandomShear(FactorRange x, FactorRange y, TransformFill fill, std::string name,
                         std::optional<int64_t> seed)
    : ProjectiveAugmentation(std::move(name), seed, fill), x_(x), y_(y) {}

std::unique_ptr<Layer> RandomShear::clone() const {
  return std::make_unique<RandomShear>(x_, y_, fill(), name(), keras_seed());
}

namespace {
// Keras 3.15 writes a factor f as the pair [-f, f] but reads back only
// pairs within [0, 1]: a symmetric range goes out as the number, which
// Keras reads as that range.
void write_shear_factor(KerasConfigWriter& c, const char* key, const FactorRange& f) {
  if (f.lower == -f.upper)
    c.number(key, f.upper);
  else
    write_factor(c, key, f);
}
}  // namespace

void RandomShear::write_config(KerasConfigWriter& c) const {
  write_shear_factor(c, "x_factor", x_);
  write_shear_factor(c, "y_factor", y_);
  write_fill(c);
  write_seed(c);
}

ImageAugmentation::Draw RandomShear::draw(Rng& rng) const {
  // Keras' order: the coin, then y, then x.
  const float sign = rng.uniform01() > 0.5f ? -1.0f : 1.0f;
  const float v = rng.uniform(static_cast<float>(y_.lower), static_cast<float>(y_.upper));
  const float u = rng.uniform(static_cast<float>(x_.lower), static_cast<float>(x_.upper));
  return {u * sign, v * sign};
}

data::ProjectiveTransform RandomShear::matrix(const Draw& d) const { return {1, d[0], 0, d[1], 1, 0, 0, 0}; }

namespace {
// Keras' default for either factor: 0, no shear that way.
FactorRange shear_range(const KerasLayerConfig& l, const char* key) {
  return l.has(key) ? factor_range(l, key, -1, 1) : FactorRange{};
}

std::unique_ptr<Layer> random_shear_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<RandomShear>(shear_range(l, "x_factor"), shear_range(l, "y_factor"), transform_fill(l),
                                       l.name(), keras_seed(l));
}
const LayerEntry kRandomShearEntry{
    "RandomShear", random_shear_from_keras,
    "x_factor, y_factor (default 0; a number f: the range [-f, f]; each bound in [-1, 1]), fill_mode, "
    "interpolation, fill_value, seed; training only"};
const LayerRegistration kRandomShearRegistered(kRandomShearEntry);
}  // namespace
}  // namespace axon::nn
