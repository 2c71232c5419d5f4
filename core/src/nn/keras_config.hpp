// Reading one layer of a Keras model JSON (Keras 2's and Keras 3's layouts):
// its class name, name and config, with typed accessors that turn anything
// unexpected into one UsageError naming the file, the layer (index, class,
// name) and the reason. Every value is checked: the file may be hostile.
#pragma once

#include <axon/error.hpp>
#include <axon/nn/activation.hpp>
#include <axon/nn/keras_config.hpp>
#include <axon/plugin_abi.h>
#include <axon/tensor.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

namespace axon::nn {

using json = nlohmann::json;

struct KerasConfigWriter::Impl {
  json config = json::object();
};

// The JSON value as one printable line, for messages.
std::string json_text(const json& v);

// What KerasLayerConfig::fail throws: a UsageError that already names the
// file and the layer.
class KerasLayerError : public UsageError {
 public:
  using UsageError::UsageError;
};

class KerasLayerConfig {
 public:
  // A layer outside a model's list (the functional API's call on tensors):
  // messages name it without an index.
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);
  KerasLayerConfig(const std::string& source, size_t index, const json& layer);

  const std::string& class_name() const { return class_name_; }
  const std::string& name() const { return name_; }
  size_t index() const { return index_; }
  const json& layer() const { return *layer_; }
  bool has(const char* key) const;
  const json& at(const char* key) const { return config_->at(key); }
  // The key's value, or null where it is absent.
  const json& at_or_null(const char* key) const;

  [[noreturn]] void fail(const std::string& why) const;

  int64_t integer(const json& v, const char* key, int64_t lo, int64_t hi) const;
  int64_t integer(const char* key, int64_t lo, int64_t hi, int64_t fallback) const;
  // An int n (meaning n, n) or a pair [a, b]: kernel_size, strides, pool_size.
  std::pair<int64_t, int64_t> pair(const char* key, int64_t lo, int64_t hi, std::pair<int64_t, int64_t> fallback) const;
  // ZeroPadding2D's padding, Cropping2D's cropping: n, (h, w) or ((top,
  // bottom), (left, right)), each from 0 to hi, as {top, bottom, left, right}.
  std::array<int64_t, 4> sides(const char* key, int64_t hi, int64_t fallback) const;
  double number(const char* key, double fallback) const;
  // A number a float holds (|x| <= 1e30), as a float.
  float float_number(const char* key, double fallback) const;
  // A required rate from 0 to below 1, also as the float a layer keeps
  // (0.99999999 is 1 as a float): Dropout's, GaussianDropout's.
  float rate() const;
  std::string string(const char* key, const std::string& fallback) const;
  bool boolean(const char* key, bool fallback) const;
  // Each key must be absent or null ("axon supports none").
  void require_null(std::initializer_list<const char*> keys) const;
  // An initializer or activation: a name, or {"class_name": ...}.
  std::string class_or_name(const char* key, const std::string& fallback) const;

  // trainable, dtype (float32 only) and data_format (channels_last only).
  void check_common() const;
  // The key's initializer must be `want` (Keras' spelling either way:
  // "GlorotUniform" or "glorot_uniform").
  void check_initializer(const char* key, const char* want) const;
  // The key's initializer with its arguments (any keras_initializer class),
  // or nullopt where it is the layer's default `fallback`.
  std::optional<KerasInitializer> initializer(const char* key, const char* fallback) const;
  // kernel_constraint, bias_constraint and activity_regularizer must be
  // null: axon has none of them.
  void check_no_constraints() const;
  // The key's regularizer as an L2 factor: null 0, Keras' L2(l2) (or the
  // name "l2": 0.01), L1L2 with l1 0; any other is refused.
  Regularizer regularizer(const char* key) const;
  // `activation`: any name activation_from_name knows.
  Activation activation() const;
  axon_padding padding() const;

 private:
  std::string where() const;  // "layers[3] ", or nothing for kNoIndex

  std::string source_;
  size_t index_;
  std::string class_name_, name_;
  const json* layer_ = nullptr;
  const json* config_ = nullptr;
};

}  // namespace axon::nn
