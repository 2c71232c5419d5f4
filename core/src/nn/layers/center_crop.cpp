// CenterCrop: the centre window of an image at least as large both ways,
// else Keras' smart_resize (the centre window of the target's aspect ratio,
// resized bilinearly).
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/data/resize.hpp>

namespace axon::nn {

CenterCrop::CenterCrop(int64_t height, int64_t width, std::string name)
    : FixedSizeImage("CenterCrop", height, width, std::move(name)) {}

std::unique_ptr<Layer> CenterCrop::clone() const { return std::make_unique<CenterCrop>(height_, width_, name()); }

void CenterCrop::write_config(KerasConfigWriter& c) const {
  write_size(c);
  c.string("data_format", "channels_last");
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
  const auto [height, width] = target_size(l);
  return std::make_unique<CenterCrop>(height, width, l.name());
}
const LayerEntry kCenterCropEntry{"CenterCrop", center_crop_from_keras,
                                  "height, width (smaller images: the centre window of their aspect ratio, "
                                  "resized); in training and inference"};
const LayerRegistration kCenterCropRegistered(kCenterCropEntry);
}  // namespace
}  // namespace axon::nn
