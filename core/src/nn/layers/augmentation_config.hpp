// The Keras config keys the augmentation layers share: factor ranges, the
// projective transform's fill, the seed.
#pragma once

#include "../keras_config.hpp"

#include <axon/nn/augmentation.hpp>

#include <optional>
#include <utility>

namespace axon::nn {

// Keras' factor: a number f means [max(-|f|, lo), |f|], a pair [a, b] the
// range between them; every value within [lo, hi].
FactorRange factor_range(const KerasLayerConfig& l, const char* key, double lo, double hi);
void write_factor(KerasConfigWriter& c, const char* key, const FactorRange& f);
// value_range: a pair of finite numbers, as given (default [0, 255]).
std::pair<double, double> value_range(const KerasLayerConfig& l);
// The same sorted, as Keras 3's colour layers keep it.
std::pair<double, double> sorted_value_range(const KerasLayerConfig& l);
// The same sorted (or as given: RandomHue's), refused where both ends are
// one number: the layers that take images to [0, 255] or [0, 1] and back
// divide by its width.
std::pair<double, double> value_range_to_scale(const KerasLayerConfig& l, bool sorted = true);
// fill_mode, interpolation, fill_value.
TransformFill transform_fill(const KerasLayerConfig& l);
// seed: null (the run's --seed decides) or an integer.
std::optional<int64_t> keras_seed(const KerasLayerConfig& l);
// The image shape s itself where it has 3 channels (the layers that
// work in RGB: grey weights, HSV); refused otherwise.
Shape rgb_image_shape(const Shape& s);
// height and width (both required), each from 1 to a model input's side limit.
std::pair<int64_t, int64_t> target_size(const KerasLayerConfig& l);

}  // namespace axon::nn
