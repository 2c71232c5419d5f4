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
// value_range: a pair of finite numbers, as given (fallback where absent).
std::pair<double, double> value_range(const KerasLayerConfig& l, std::pair<double, double> fallback);
// fill_mode, interpolation, fill_value.
TransformFill transform_fill(const KerasLayerConfig& l);
// seed: null (the run's --seed decides) or an integer.
std::optional<int64_t> keras_seed(const KerasLayerConfig& l);
// height and width (both required), each from 1 to a model input's side limit.
std::pair<int64_t, int64_t> target_size(const KerasLayerConfig& l);

}  // namespace axon::nn
