// StochasticDepth: Dropout of a whole sample at once (see layers.hpp). Keras
// computes (x / keep) * floor(keep + U[0, 1)); axon's Dropout x * (1 /
// keep) where its own draw keeps the sample: the same distribution, not
// Keras' draws or the division's rounding.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>

#include <cmath>

namespace axon::nn {

StochasticDepth::StochasticDepth(double drop_path_rate, std::string name)
    : Dropout(static_cast<float>(drop_path_rate), std::move(name)), drop_path_rate_(drop_path_rate) {}

std::unique_ptr<Layer> StochasticDepth::clone() const {
  return std::make_unique<StochasticDepth>(drop_path_rate_, name());
}

void StochasticDepth::write_config(KerasConfigWriter& c) const { c.number("drop_path_rate", drop_path_rate_); }

void StochasticDepth::on_build(Device& device, Rng& rng) {
  set_noise_shape(Shape(input_shape().size(), 1));
  Dropout::on_build(device, rng);
}

namespace {
std::unique_ptr<Layer> stochastic_depth_from_keras(const KerasLayerConfig& l) {
  if (!l.has("drop_path_rate") || !l.at("drop_path_rate").is_number())
    l.fail("has no drop_path_rate (a number from 0 to below 1)");
  const double rate = l.number("drop_path_rate", 0.0);
  if (!(rate >= 0.0 && static_cast<float>(rate) < 1.0f))
    l.fail("drop_path_rate is " + json_text(l.at("drop_path_rate")) + ", not from 0 to below 1");
  return std::make_unique<StochasticDepth>(rate, l.name());
}
const LayerEntry kStochasticDepthEntry{"StochasticDepth", stochastic_depth_from_keras,
                                       "drop_path_rate (ConvNeXt's, keras.src.applications.convnext)"};
const LayerRegistration kStochasticDepthRegistered(kStochasticDepthEntry);
}  // namespace
}  // namespace axon::nn
