// The keys of a layer's Keras config, as Layer::write_config writes them
// (Keras 3's layout, which Keras' model_from_json reads).
#pragma once

#include <axon/nn/initializers.hpp>
#include <axon/nn/regularizer.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace axon::nn {

class KerasConfigWriter {
 public:
  KerasConfigWriter();
  ~KerasConfigWriter();
  KerasConfigWriter(const KerasConfigWriter&) = delete;
  KerasConfigWriter& operator=(const KerasConfigWriter&) = delete;

  void integer(const char* key, int64_t value);
  void integers(const char* key, const std::vector<int64_t>& values);  // a list: [3, 3]
  void number(const char* key, double value);
  void boolean(const char* key, bool value);
  void string(const char* key, const std::string& value);
  void null(const char* key);
  // {"module": "keras.initializers", "class_name": ..., "config": {...}, ...}
  void initializer(const char* key, const KerasInitializer& init);
  // Keras' L1, L2 or L1L2 regularizer; nothing where both factors are 0
  // (Keras' null).
  void regularizer(const char* key, Regularizer r);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace axon::nn
