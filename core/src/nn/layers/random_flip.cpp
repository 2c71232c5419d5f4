// RandomFlip: one uniform draw per image, flipped where it is <= 0.5.
#include "../layer_registry.hpp"
#include "augmentation_config.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

namespace axon::nn {

RandomFlip::RandomFlip(std::string mode, std::string name, std::optional<int64_t> seed)
    : ImageAugmentation(std::move(name), seed), mode_(std::move(mode)) {
  horizontal_ = mode_ == "horizontal" || mode_ == "horizontal_and_vertical";
  vertical_ = mode_ == "vertical" || mode_ == "horizontal_and_vertical";
  if (!horizontal_ && !vertical_)
    throw UsageError("RandomFlip: mode must be horizontal, vertical or horizontal_and_vertical, got " +
                     parse::printable(mode_));
}

std::unique_ptr<Layer> RandomFlip::clone() const { return std::make_unique<RandomFlip>(mode_, name(), keras_seed()); }

void RandomFlip::write_config(KerasConfigWriter& c) const {
  c.string("mode", mode_);
  write_seed(c);
  c.string("data_format", "channels_last");
}

ImageAugmentation::Draw RandomFlip::draw(Rng& rng) const { return {rng.uniform01()}; }

void RandomFlip::transform(const float* in, const Draw& d, float* out) const {
  // Keras 3 flips both ways on the same draw in horizontal_and_vertical.
  const bool flipped = d[0] <= 0.5f;
  data::flip(in, image_size(), flipped && horizontal_, flipped && vertical_, out);
}

namespace {
std::unique_ptr<Layer> random_flip_from_keras(const KerasLayerConfig& l) {
  const std::string mode = l.string("mode", "horizontal_and_vertical");
  if (mode != "horizontal" && mode != "vertical" && mode != "horizontal_and_vertical")
    l.fail("mode is \"" + mode + "\"; Keras takes horizontal, vertical or horizontal_and_vertical");
  return std::make_unique<RandomFlip>(mode, l.name(), keras_seed(l));
}
const LayerEntry kRandomFlipEntry{"RandomFlip", random_flip_from_keras,
                                  "mode (both ways on one draw, as Keras 3), seed; training only"};
const LayerRegistration kRandomFlipRegistered(kRandomFlipEntry);
}  // namespace
}  // namespace axon::nn
