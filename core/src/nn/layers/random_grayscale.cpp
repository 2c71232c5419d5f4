// RandomGrayscale: one uniform draw per image; below factor, the image's
// grey in all three channels (Keras' rgb_to_grayscale, then where()).
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <algorithm>

namespace axon::nn {

RandomGrayscale::RandomGrayscale(double factor, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factor_(factor) {
  if (!(factor >= 0 && factor <= 1)) throw UsageError("RandomGrayscale: factor must be from 0 to 1");
}

std::unique_ptr<Layer> RandomGrayscale::clone() const {
  return std::make_unique<RandomGrayscale>(factor_, name(), keras_seed());
}

void RandomGrayscale::write_config(KerasConfigWriter& c) const {
  c.number("factor", factor_);
  c.string("data_format", "channels_last");
  write_seed(c);
}

Shape RandomGrayscale::output_shape(std::span<const Shape> in) const {
  const Shape s = ImageAugmentation::output_shape(in);
  if (s[2] != 1 && s[2] != 3)
    throw UsageError("needs an RGB or grey image (3 or 1 channels), gets " + std::to_string(s[2]) + " channels");
  return s;
}

ImageAugmentation::Draw RandomGrayscale::draw(Rng& rng) const { return {rng.uniform01()}; }

void RandomGrayscale::transform(const float* in, const Draw& d, float* out) const {
  const data::ImageSize s = image_size();
  // Keras compares the float32 draw with the factor as float32.
  if (s.channels == 3 && d[0] < static_cast<float>(factor_)) return data::grayscale(in, s, out);
  std::copy_n(in, s.floats(), out);
}

namespace {
std::unique_ptr<Layer> random_grayscale_from_keras(const KerasLayerConfig& l) {
  double factor = 0.5;
  if (l.has("factor")) {
    const json& v = l.at("factor");
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
      l.fail("factor is " + json_text(v) + "; Keras takes a number from 0 to 1");
    factor = v.get<double>();
  }
  return std::make_unique<RandomGrayscale>(factor, l.name(), keras_seed(l));
}
const LayerEntry kRandomGrayscaleEntry{
    "RandomGrayscale", random_grayscale_from_keras,
    "factor (the chance of grey, default 0.5), seed; RGB or grey images; training only"};
const LayerRegistration kRandomGrayscaleRegistered(kRandomGrayscaleEntry);
}  // namespace
}  // namespace axon::nn
