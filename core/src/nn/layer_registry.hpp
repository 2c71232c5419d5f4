// The layer registry: every Keras layer class axon reads, by name. Each
// layer's file under core/src/nn/layers/ registers itself with one static
// LayerRegistration, so adding a layer is one file (plus its ops). The Keras
// reader creates layers through it; `axon-train --layer-table` lists it
// (docs/training.md shows that table).
#pragma once

#include "keras_config.hpp"

#include <axon/nn/layer.hpp>

#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

namespace axon::nn {

struct LayerEntry {
  const char* keras_class;  // "Conv2D"
  // The layer for a checked config (the reader has done name, trainable,
  // dtype and data_format); UsageError through config.fail() otherwise.
  std::unique_ptr<Layer> (*from_keras)(const KerasLayerConfig& config);
  const char* arguments;  // what axon reads of the config, for the docs table
};

struct LayerRegistration {
  explicit LayerRegistration(const LayerEntry& entry);
};

const LayerEntry* find_layer(std::string_view keras_class);
// Every entry, sorted by class name.
std::vector<const LayerEntry*> layer_entries();
// "AveragePooling2D, BatchNormalization, ...", for messages.
std::string supported_layers();

// Reads each weight's initializer and L2 regularizer from `config` into
// `layer`; returns the layer.
struct WeightKeys {
  const char* weight;       // "kernel"
  const char* initializer;  // "kernel_initializer"
  const char* fallback;     // the layer's default initializer: "GlorotUniform"
  const char* regularizer;  // "kernel_regularizer"
};
std::unique_ptr<Layer> with_weight_settings(std::unique_ptr<Layer> layer, const KerasLayerConfig& config,
                                            std::initializer_list<WeightKeys> keys);

}  // namespace axon::nn
