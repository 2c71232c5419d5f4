// The host round trip every augmentation layer shares: the batch read back,
// each image transformed by its own keyed draw, the result sent up.
#include <axon/error.hpp>
#include <axon/nn/augmentation.hpp>

#include "keras_config.hpp"

namespace axon::nn {

Shape ImageAugmentation::output_shape(std::span<const Shape> in) const {
  if (in[0].size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(in[0]));
  return in[0];
}

void ImageAugmentation::on_build(Device&, Rng& rng) {
  // Drawn either way, so a Keras seed does not move the weights drawn after.
  const uint64_t from_run = rng.next_u64();
  seed_ = keras_seed_ ? Rng::derive(static_cast<uint64_t>(*keras_seed_), 0).next_u64() : from_run;
}

Rng ImageAugmentation::stream(int64_t step, int64_t sample) const {
  Rng of_step = Rng::derive(seed_, static_cast<uint64_t>(step));
  return Rng::derive(of_step.next_u64(), static_cast<uint64_t>(sample + 1));
}

data::ImageSize ImageAugmentation::image_size() const {
  const Shape& s = input_shape();
  return {s[0], s[1], s[2]};
}

void ImageAugmentation::infer(const float* in, float* out) const {
  std::copy_n(in, numel(input_shape()), out);
}

Tensor ImageAugmentation::forward(std::span<const Tensor> x) {
  const bool train = training();
  if (!train && !changes_at_inference()) return x[0];
  const int64_t n = x[0].dim(0), in_floats = numel(input_shape()), out_floats = numel(output_shape());
  in_.resize(static_cast<size_t>(n * in_floats));
  out_.resize(static_cast<size_t>(n * out_floats));
  x[0].copy_to_host(in_.data(), x[0].bytes());
  if (train) {
    const StepContext* step = step_context();
    const int64_t index = step != nullptr ? step->step_index() : own_steps_++;
    const int64_t first = step != nullptr ? step->first_sample() : 0;
    std::optional<Draw> batch, part;
    Rng of_batch = stream(index, -1);
    if (one_draw_per_batch())
      batch = draw(of_batch);
    else
      part = batch_part(of_batch);
    for (int64_t i = 0; i < n; ++i) {
      Rng r = stream(index, first + i);
      Draw d = batch ? *batch : draw(r);
      if (part) with_batch_part(*part, d);
      transform(in_.data() + i * in_floats, d, out_.data() + i * out_floats);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) infer(in_.data() + i * in_floats, out_.data() + i * out_floats);
  }
  Tensor y = take(n, output_shape());
  y.copy_from_host(out_.data(), out_.size() * sizeof(float));
  return y;
}

void ImageAugmentation::backward(const Tensor&, std::span<const bool> need_dx, std::span<Tensor>) {
  // The model refuses a graph that needs this gradient (replica.cpp).
  if (need_dx[0]) throw RuntimeError(what() + ": no gradient flows through an augmentation layer");
}

void ImageAugmentation::write_seed(KerasConfigWriter& c) const {
  if (keras_seed_)
    c.integer("seed", *keras_seed_);
  else
    c.null("seed");
}

FixedSizeImage::FixedSizeImage(const char* what, int64_t height, int64_t width, std::string name)
    : ImageAugmentation(std::move(name), std::nullopt), height_(height), width_(width) {
  if (height < 1 || width < 1) throw UsageError(std::string(what) + ": height and width must be positive");
}

Shape FixedSizeImage::output_shape(std::span<const Shape> in) const {
  return {height_, width_, ImageAugmentation::output_shape(in)[2]};
}

void FixedSizeImage::write_size(KerasConfigWriter& c) const {
  c.integer("height", height_);
  c.integer("width", width_);
}

void ProjectiveAugmentation::transform(const float* in, const Draw& d, float* out) const {
  data::projective_transform(in, image_size(), matrix(d), fill_.interpolation, fill_.fill_mode, fill_.fill_value, out);
}

void ProjectiveAugmentation::write_fill(KerasConfigWriter& c) const {
  static const char* const modes[] = {"reflect", "wrap", "constant", "nearest"};
  c.string("fill_mode", modes[static_cast<int>(fill_.fill_mode)]);
  c.string("interpolation", fill_.interpolation == data::Interpolation::nearest ? "nearest" : "bilinear");
  c.number("fill_value", fill_.fill_value);
  c.string("data_format", "channels_last");
}

}  // namespace axon::nn
