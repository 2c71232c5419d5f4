// RandomPosterization: per image a bit count from the factor's integers;
// each value's 8-bit level (on the [0, 255] scale) keeps that many high bits.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace axon::nn {

RandomPosterization::RandomPosterization(int lower, int upper, double lo, double hi, std::string name,
                                         std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), lower_(lower), upper_(upper), lo_(lo), hi_(hi) {
  if (!(lower >= 1 && lower <= upper && upper <= 8))
    throw UsageError("RandomPosterization: factor must be a range of bit counts within [1, 8]");
  if (!(lo < hi)) throw UsageError("RandomPosterization: value_range must hold two different numbers");
}

std::unique_ptr<Layer> RandomPosterization::clone() const {
  return std::make_unique<RandomPosterization>(lower_, upper_, lo_, hi_, name(), keras_seed());
}

void RandomPosterization::write_config(KerasConfigWriter& c) const {
  c.impl().config["factor"] = json::array({lower_, upper_});
  c.impl().config["value_range"] = json::array({lo_, hi_});
  c.string("data_format", "channels_last");
  write_seed(c);
}

ImageAugmentation::Draw RandomPosterization::draw(Rng& rng) const {
  // Keras: randint(lower, upper), upper excluded; lower itself where they meet.
  const int span = upper_ - lower_;
  const int bits = span == 0 ? lower_ : lower_ + std::min(span - 1, static_cast<int>(rng.uniform01() * span));
  return {static_cast<float>(bits)};
}

void RandomPosterization::transform(const float* in, const Draw& d, float* out) const {
  data::posterize(in, image_size(), static_cast<int>(d[0]), static_cast<float>(lo_), static_cast<float>(hi_), out);
}

namespace {
std::unique_ptr<Layer> random_posterization_from_keras(const KerasLayerConfig& l) {
  const FactorRange f = factor_range(l, "factor", 1, 8);
  if (f.lower != std::floor(f.lower) || f.upper != std::floor(f.upper))
    l.fail("factor is " + json_text(l.at("factor")) + "; axon takes whole bit counts");
  const auto [lo, hi] = value_range_to_scale(l);
  return std::make_unique<RandomPosterization>(static_cast<int>(f.lower), static_cast<int>(f.upper), lo, hi, l.name(),
                                               keras_seed(l));
}
const LayerEntry kRandomPosterizationEntry{
    "RandomPosterization", random_posterization_from_keras,
    "factor (bits kept: a number f means [1, f), a pair [a, b] the integers from a below b, a where a = b; "
    "within [1, 8]), value_range, seed; training only"};
const LayerRegistration kRandomPosterizationRegistered(kRandomPosterizationEntry);
}  // namespace
}  // namespace axon::nn
