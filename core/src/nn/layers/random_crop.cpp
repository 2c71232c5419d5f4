// RandomCrop: a height x width window; its corner drawn once per batch in
// training where the image is larger both ways, else the centre window of
// the target's aspect ratio, resized (TensorFlow's bilinear) to the target.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/data/resize.hpp>
#include <axon/error.hpp>

#include <algorithm>

namespace axon::nn {

RandomCrop::RandomCrop(int64_t height, int64_t width, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), height_(height), width_(width) {
  if (height < 1 || width < 1) throw UsageError("RandomCrop: height and width must be positive");
}

std::unique_ptr<Layer> RandomCrop::clone() const {
  return std::make_unique<RandomCrop>(height_, width_, name(), keras_seed());
}

void RandomCrop::write_config(KerasConfigWriter& c) const {
  c.integer("height", height_);
  c.integer("width", width_);
  write_seed(c);
  c.string("data_format", "channels_last");
}

Shape RandomCrop::output_shape(std::span<const Shape> in) const {
  return {height_, width_, ImageAugmentation::output_shape(in)[2]};
}

ImageAugmentation::Draw RandomCrop::centre() const {
  const data::Window w = data::aspect_window(image_size(), height_, width_);
  return {static_cast<float>(w.top), static_cast<float>(w.left), static_cast<float>(w.rows),
          static_cast<float>(w.cols)};
}

ImageAugmentation::Draw RandomCrop::draw(Rng& rng) const {
  const data::ImageSize s = image_size();
  if (s.height > height_ && s.width > width_) {
    const auto top = static_cast<int64_t>(rng.uniform(0, static_cast<float>(s.height - height_ + 1)));
    const auto left = static_cast<int64_t>(rng.uniform(0, static_cast<float>(s.width - width_ + 1)));
    return {static_cast<float>(top), static_cast<float>(left)};
  }
  return centre();
}

void RandomCrop::transform(const float* in, const Draw& d, float* out) const {
  // Keras slices height x width rows from the corner (fewer where the image
  // ends there) and resizes what it got when that is not the target size.
  const data::ImageSize s = image_size();
  const auto top = static_cast<int64_t>(d[0]), left = static_cast<int64_t>(d[1]);
  const int64_t rows = std::min(height_, s.height - top), cols = std::min(width_, s.width - left);
  if (rows == height_ && cols == width_) {
    data::crop(in, s, top, left, rows, cols, out);
    return;
  }
  window_.resize(static_cast<size_t>(rows * cols * s.channels));
  data::crop(in, s, top, left, rows, cols, window_.data());
  data::resize_bilinear(std::span<const float>(window_), rows, cols, s.channels, out, height_, width_);
}

bool RandomCrop::changes_at_inference() const {
  const data::ImageSize s = image_size();
  return s.height != height_ || s.width != width_;
}

void RandomCrop::infer(const float* in, float* out) const {
  const data::ImageSize s = image_size();
  const Draw c = centre();
  const auto top = static_cast<int64_t>(c[0]), left = static_cast<int64_t>(c[1]);
  const auto rows = static_cast<int64_t>(c[2]), cols = static_cast<int64_t>(c[3]);
  window_.resize(static_cast<size_t>(rows * cols * s.channels));
  data::crop(in, s, top, left, rows, cols, window_.data());
  if (rows == height_ && cols == width_)
    std::copy(window_.begin(), window_.end(), out);
  else
    data::resize_bilinear(std::span<const float>(window_), rows, cols, s.channels, out, height_, width_);
}

namespace {
std::unique_ptr<Layer> random_crop_from_keras(const KerasLayerConfig& l) {
  const auto [height, width] = target_size(l);
  return std::make_unique<RandomCrop>(height, width, l.name(), keras_seed(l));
}
const LayerEntry kRandomCropEntry{"RandomCrop", random_crop_from_keras,
                                  "height, width, seed; one window per batch in training, the centre at inference"};
const LayerRegistration kRandomCropRegistered(kRandomCropEntry);
}  // namespace
}  // namespace axon::nn
