// CenterCrop: the centre window of an image at least as large both ways,
// else Keras' smart_resize (the centre window of the target's aspect ratio,
// resized bilinearly).
#include "../layer_registry.hpp"

#include <axon/data/resize.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/augmentation.hpp>

namespace axon::nn {

CenterCrop::CenterCrop(int64_t height, int64_t width, std::string name)
    : ImageAugmentation(std::move(name), std::nullopt), height_(height), width_(width) {
  if (height < 1 || width < 1) throw UsageError("CenterCrop: height and width must be positive");
}

std::unique_ptr<Layer> CenterCrop::clone() const { return std::make_unique<CenterCrop>(height_, width_, name()); }

void CenterCrop::write_config(KerasConfigWriter& c) const {
  c.integer("height", height_);
  c.integer("width", width_);
  c.string("data_format", "channels_last");
}

Shape CenterCrop::output_shape(std::span<const Shape> in) const {
  return {height_, width_, ImageAugmentation::output_shape(in)[2]};
}

void CenterCrop::infer(const float* in, float* out) const {
  const data::ImageSize s = image_size();
  if (s.height >= height_ && s.width >= width_)
    return data::crop(in, s, (s.height - height_) / 2, (s.width - width_) / 2, height_, width_, out);
  const data::Window w = data::aspect_window(s, height_, width_);
  window_.resize(static_cast<size_t>(w.rows * w.cols * s.channels));
  data::crop(in, s, w.top, w.left, w.rows, w.cols, window_.data());
  data::resize_bilinear(std::span<const float>(window_), w.rows, w.cols, s.channels, out, height_, width_);
}

namespace {
std::unique_ptr<Layer> center_crop_from_keras(const KerasLayerConfig& l) {
  for (const char* k : {"height", "width"})
    if (!l.has(k)) l.fail(std::string("has no ") + k);
  const int64_t hi = limits::kMaxModelImageSide;
  return std::make_unique<CenterCrop>(l.integer(l.at("height"), "height", 1, hi),
                                      l.integer(l.at("width"), "width", 1, hi), l.name());
}
const LayerEntry kCenterCropEntry{"CenterCrop", center_crop_from_keras,
                                  "height, width (smaller images: the centre window of their aspect ratio, "
                                  "resized); in training and inference"};
const LayerRegistration kCenterCropRegistered(kCenterCropEntry);
}  // namespace
}  // namespace axon::nn
