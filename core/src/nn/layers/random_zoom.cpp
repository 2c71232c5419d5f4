// RandomZoom: per image zooms of 1 + a draw per axis, about the centre:
// TensorFlow's transform [zx, 0, (w - 1) / 2 (1 - zx), 0, zy, (h - 1) / 2 (1 - zy)].
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

namespace axon::nn {

RandomZoom::RandomZoom(FactorRange height, std::optional<FactorRange> width, TransformFill fill, std::string name,
                       std::optional<int64_t> seed)
    : ProjectiveAugmentation(std::move(name), seed, fill), height_(height), width_(width) {}

std::unique_ptr<Layer> RandomZoom::clone() const {
  return std::make_unique<RandomZoom>(height_, width_, fill(), name(), keras_seed());
}

void RandomZoom::write_config(KerasConfigWriter& c) const {
  write_factor(c, "height_factor", height_);
  if (width_)
    write_factor(c, "width_factor", *width_);
  else
    c.null("width_factor");
  write_fill(c);
  write_seed(c);
}

ImageAugmentation::Draw RandomZoom::draw(Rng& rng) const {
  auto between = [&](const FactorRange& f) {
    return rng.uniform(static_cast<float>(1 + f.lower), static_cast<float>(1 + f.upper));
  };
  const float zy = between(height_);
  return {zy, width_ ? between(*width_) : zy};
}

data::ProjectiveTransform RandomZoom::matrix(const Draw& d) const {
  const data::ImageSize s = image_size();
  const float zy = d[0], zx = d[1];
  const float x_offset = (static_cast<float>(s.width) - 1) / 2 * (1 - zx);
  const float y_offset = (static_cast<float>(s.height) - 1) / 2 * (1 - zy);
  return {zx, 0, x_offset, 0, zy, y_offset, 0, 0};
}

namespace {
std::unique_ptr<Layer> random_zoom_from_keras(const KerasLayerConfig& l) {
  std::optional<FactorRange> width;
  if (l.has("width_factor")) width = factor_range(l, "width_factor", -1, 1);
  return std::make_unique<RandomZoom>(factor_range(l, "height_factor", -1, 1), width, transform_fill(l), l.name(),
                                      keras_seed(l));
}
const LayerEntry kRandomZoomEntry{
    "RandomZoom", random_zoom_from_keras,
    "height_factor, width_factor (null: the height's zoom), fill_mode, interpolation, fill_value, "
    "seed; training only"};
const LayerRegistration kRandomZoomRegistered(kRandomZoomEntry);
}  // namespace
}  // namespace axon::nn
