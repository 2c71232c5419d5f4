// Resizing: tf.image.resize of every image (bilinear or nearest, antialias
// off), after Keras' centre crop to the target's aspect ratio where
// crop_to_aspect_ratio says so.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/data/resize.hpp>

namespace axon::nn {

Resizing::Resizing(int64_t height, int64_t width, data::Interpolation interpolation, bool crop_to_aspect_ratio,
                   std::string name)
    : FixedSizeImage("Resizing", height, width, std::move(name)),
      interpolation_(interpolation),
      crop_to_aspect_ratio_(crop_to_aspect_ratio) {}

std::unique_ptr<Layer> Resizing::clone() const {
  return std::make_unique<Resizing>(height_, width_, interpolation_, crop_to_aspect_ratio_, name());
}

void Resizing::write_config(KerasConfigWriter& c) const {
  write_size(c);
  c.string("interpolation", interpolation_ == data::Interpolation::nearest ? "nearest" : "bilinear");
  c.boolean("crop_to_aspect_ratio", crop_to_aspect_ratio_);
  c.string("data_format", "channels_last");
}

void Resizing::infer(const float* in, float* out) const {
  const data::ImageSize s = image_size();
  int64_t rows = s.height, cols = s.width;
  const float* from = in;
  if (crop_to_aspect_ratio_) {
    const data::Window w = data::aspect_window(s, height_, width_);
    window_.resize(static_cast<size_t>(w.rows * w.cols * s.channels));
    data::crop(in, s, w.top, w.left, w.rows, w.cols, window_.data());
    rows = w.rows, cols = w.cols, from = window_.data();
  }
  const std::span<const float> image(from, static_cast<size_t>(rows * cols * s.channels));
  if (interpolation_ == data::Interpolation::nearest)
    data::resize_nearest(image, rows, cols, s.channels, out, height_, width_);
  else
    data::resize_bilinear(image, rows, cols, s.channels, out, height_, width_);
}

namespace {
std::unique_ptr<Layer> resizing_from_keras(const KerasLayerConfig& l) {
  const auto [height, width] = target_size(l);
  const std::string interpolation = l.string("interpolation", "bilinear");
  if (interpolation != "bilinear" && interpolation != "nearest")
    l.fail("interpolation is \"" + interpolation + "\"; axon reads bilinear and nearest");
  if (l.boolean("pad_to_aspect_ratio", false)) l.fail("pad_to_aspect_ratio is true; axon reads only false");
  if (l.boolean("antialias", false)) l.fail("antialias is true; axon reads only false");
  return std::make_unique<Resizing>(height, width,
                                    interpolation == "nearest" ? data::Interpolation::nearest
                                                               : data::Interpolation::bilinear,
                                    l.boolean("crop_to_aspect_ratio", false), l.name());
}
const LayerEntry kResizingEntry{"Resizing", resizing_from_keras,
                                "height, width, interpolation (bilinear, nearest), crop_to_aspect_ratio; antialias "
                                "and pad_to_aspect_ratio false; in training and inference"};
const LayerRegistration kResizingRegistered(kResizingEntry);
}  // namespace
}  // namespace axon::nn
