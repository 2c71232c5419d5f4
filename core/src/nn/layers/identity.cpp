// Identity: Keras' layer that returns its input.
#include "../layer_registry.hpp"

#include <axon/nn/layers.hpp>

namespace axon::nn {
namespace {
std::unique_ptr<Layer> identity_from_keras(const KerasLayerConfig& l) { return std::make_unique<Identity>(l.name()); }
const LayerEntry kIdentityEntry{"Identity", identity_from_keras, "(no arguments)"};
const LayerRegistration kIdentityRegistered(kIdentityEntry);
}  // namespace
}  // namespace axon::nn
