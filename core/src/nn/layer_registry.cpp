#include "layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/keras_json.hpp>

#include <algorithm>
#include <cstring>

namespace axon::nn {
namespace {
// Filled by static initialisers before main (one per layer file), read after.
std::vector<const LayerEntry*>& entries() {
  static std::vector<const LayerEntry*> v;
  return v;
}
}  // namespace

LayerRegistration::LayerRegistration(const LayerEntry& entry) { entries().push_back(&entry); }

const LayerEntry* find_layer(std::string_view keras_class) {
  for (const LayerEntry* e : entries())
    if (keras_class == e->keras_class) return e;
  return nullptr;
}

std::vector<const LayerEntry*> layer_entries() {
  std::vector<const LayerEntry*> v = entries();
  std::sort(v.begin(), v.end(),
            [](const LayerEntry* a, const LayerEntry* b) { return std::strcmp(a->keras_class, b->keras_class) < 0; });
  return v;
}

std::string supported_layers_table() {
  std::string s = "| Keras layer | what axon reads of its config |\n| --- | --- |\n";
  s += "| `InputLayer` | batch_shape (Keras 2: batch_input_shape) [null, height, width, channels], or [null, height, width] for images of one channel |\n";
  for (const LayerEntry* e : layer_entries()) s += std::string("| `") + e->keras_class + "` | " + e->arguments + " |\n";
  return s;
}

std::string supported_layers() {
  std::string s;
  for (const LayerEntry* e : layer_entries()) (s += s.empty() ? "" : ", ") += e->keras_class;
  return s;
}

std::unique_ptr<Layer> with_weight_settings(std::unique_ptr<Layer> layer, const KerasLayerConfig& config,
                                            std::initializer_list<WeightKeys> keys) {
  for (const WeightKeys& k : keys) {
    if (std::optional<KerasInitializer> init = config.initializer(k.initializer, k.fallback))
      layer->set_initializer(k.weight, std::move(*init));
    layer->set_regularizer(k.weight, config.regularizer(k.regularizer));
  }
  return layer;
}

}  // namespace axon::nn
