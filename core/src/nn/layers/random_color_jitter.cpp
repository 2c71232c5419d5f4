// RandomColorJitter: RandomBrightness, RandomContrast, RandomSaturation and
// RandomHue in Keras' order, each where its factor is given, each with its
// own draw, sharing one value_range.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <algorithm>
#include <utility>

namespace axon::nn {

RandomColorJitter::RandomColorJitter(Factors factors, double lo, double hi, std::string name,
                                     std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), factors_(factors), lo_(lo), hi_(hi) {
  if (!(lo < hi)) throw UsageError("RandomColorJitter: value_range must rise");
  if (factors.brightness) brightness_.emplace(*factors.brightness, lo, hi);
  if (factors.contrast) contrast_.emplace(*factors.contrast, static_cast<float>(lo), static_cast<float>(hi));
  if (factors.saturation) saturation_.emplace(*factors.saturation, lo, hi);
  if (factors.hue) hue_.emplace(*factors.hue, lo, hi);
}

std::unique_ptr<Layer> RandomColorJitter::clone() const {
  return std::make_unique<RandomColorJitter>(factors_, lo_, hi_, name(), keras_seed());
}

void RandomColorJitter::write_config(KerasConfigWriter& c) const {
  c.impl().config["value_range"] = json::array({lo_, hi_});
  const std::pair<const char*, const std::optional<FactorRange>*> keys[] = {
      {"brightness_factor", &factors_.brightness},
      {"contrast_factor", &factors_.contrast},
      {"saturation_factor", &factors_.saturation},
      {"hue_factor", &factors_.hue}};
  for (const auto& [key, factor] : keys)
    if (*factor)
      write_factor(c, key, **factor);
    else
      c.impl().config[key] = nullptr;
  c.string("data_format", "channels_last");
  write_seed(c);
}

Shape RandomColorJitter::output_shape(std::span<const Shape> in) const {
  const Shape s = ImageAugmentation::output_shape(in);
  return saturation_ || hue_ ? rgb_image_shape(s) : s;
}

ImageAugmentation::Draw RandomColorJitter::draw(Rng& rng) const {
  Draw d{};
  if (brightness_) d[0] = brightness_->draw(rng)[0];
  if (contrast_) d[1] = contrast_->draw(rng)[0];
  if (saturation_) d[2] = saturation_->draw(rng)[0];
  if (hue_) d[3] = hue_->draw(rng)[0];
  return d;
}

void RandomColorJitter::transform(const float* in, const Draw& d, float* out) const {
  const data::ImageSize size = image_size();
  std::copy_n(in, size.floats(), out);  // each step then works in place
  if (brightness_) RandomBrightness::apply(out, size, d[0], lo_, hi_, out);
  if (contrast_) RandomContrast::apply(out, size, d[1], static_cast<float>(lo_), static_cast<float>(hi_), out);
  if (saturation_) RandomSaturation::apply(out, size, d[2], lo_, hi_, out);
  if (hue_) RandomHue::apply(out, size, d[3], lo_, hi_, out);
}

namespace {
std::unique_ptr<Layer> random_color_jitter_from_keras(const KerasLayerConfig& l) {
  const auto [lo, hi] = value_range(l);
  if (!(lo < hi)) l.fail("value_range is " + json_text(l.at("value_range")) + "; axon takes a rising pair of numbers");
  RandomColorJitter::Factors f;
  auto factor = [&](const char* key, double bound_lo) -> std::optional<FactorRange> {
    if (!l.has(key)) return std::nullopt;
    return factor_range(l, key, bound_lo, 1);
  };
  f.brightness = factor("brightness_factor", -1);
  f.contrast = factor("contrast_factor", 0);
  f.saturation = factor("saturation_factor", -1);
  f.hue = factor("hue_factor", 0);
  return std::make_unique<RandomColorJitter>(f, lo, hi, l.name(), keras_seed(l));
}
const LayerEntry kRandomColorJitterEntry{
    "RandomColorJitter", random_color_jitter_from_keras,
    "value_range (rising), brightness_factor, contrast_factor, saturation_factor, hue_factor (each as its own "
    "layer's factor, or null: that step left out), seed; RGB images where saturation or hue is given; training only"};
const LayerRegistration kRandomColorJitterRegistered(kRandomColorJitterEntry);
}  // namespace
}  // namespace axon::nn
