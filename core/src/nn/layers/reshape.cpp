// Reshape: a view of the same buffer, forward and backward.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>

namespace axon::nn {

Reshape::Reshape(Shape target_shape, std::string name) : Layer(std::move(name)), target_(std::move(target_shape)) {
  if (target_.empty() || target_.size() > 6) throw UsageError("Reshape: target_shape needs 1 to 6 dimensions");
}

void Reshape::write_config(KerasConfigWriter& c) const { c.integers("target_shape", target_); }

Shape Reshape::output_shape(std::span<const Shape> in) const {
  const int64_t total = numel(in[0]);
  Shape s = target_;
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (unknown >= 0) throw UsageError("target_shape " + shape_string(target_) + " has more than one -1");
      unknown = static_cast<int>(i);
    } else if (s[i] < 1) {
      throw UsageError("target_shape " + shape_string(target_) + " has a dimension below 1");
    } else if (__builtin_mul_overflow(known, s[i], &known) || known > total) {
      // Larger than the input (overflowing int64 included): no -1 can fill it.
      throw UsageError("cannot reshape " + shape_string(in[0]) + " to " + shape_string(target_));
    }
  }
  if (unknown >= 0) {
    if (total % known != 0)
      throw UsageError("cannot reshape " + shape_string(in[0]) + " to " + shape_string(target_));
    s[static_cast<size_t>(unknown)] = total / known;
  }
  if (numel(s) != total) throw UsageError("cannot reshape " + shape_string(in[0]) + " to " + shape_string(target_));
  return s;
}

Tensor Reshape::forward(std::span<const Tensor> in) {
  Shape s{in[0].dim(0)};
  s.insert(s.end(), output_shape().begin(), output_shape().end());
  return in[0].reshaped(std::move(s));
}

void Reshape::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  Shape s{dy.dim(0)};
  s.insert(s.end(), input_shape().begin(), input_shape().end());
  dx[0] = dy.reshaped(std::move(s));
}

namespace {
std::unique_ptr<Layer> reshape_from_keras(const KerasLayerConfig& l) {
  if (!l.has("target_shape") || !l.at("target_shape").is_array() || l.at("target_shape").empty() ||
      l.at("target_shape").size() > 6)
    l.fail("target_shape must be a list of 1 to 6 sizes");
  Shape s;
  for (const json& d : l.at("target_shape")) s.push_back(l.integer(d, "target_shape", -1, limits::kMaxLayerOutputsPerSample));
  return std::make_unique<Reshape>(std::move(s), l.name());
}
const LayerEntry kReshapeEntry{"Reshape", reshape_from_keras, "target_shape (one size may be -1)"};
const LayerRegistration kReshapeRegistered(kReshapeEntry);
}  // namespace
}  // namespace axon::nn
