// The model's weights as safetensors tensors, one per parameter, named by the
// parameter's Keras name with a prefix ("conv2d/kernel", "optimizer/m/conv2d/kernel")
// and in Keras' layouts (Conv2D kernels HWIO, Dense [in, out]). Checkpoints
// and safetensors weights files share this naming.
#pragma once

#include <axon/error.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/nn/replica.hpp>

#include <span>
#include <string>
#include <utility>
#include <vector>

namespace axon::train {

// Each weight's name, shape and place in a flat buffer of `floats` floats.
struct WeightLayout {
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  std::vector<int64_t> offsets;
  int64_t floats = 0;

  // A replica's parameters in its flat buffers (ParameterBuffers); with
  // trainable_only, those the optimizer has state for (its m and v hold the
  // trainable part of the values' layout, at the same offsets).
  static WeightLayout of(nn::Replica& replica, bool trainable_only = false);
  // Weights known by name and shape alone (no device), packed end to end.
  static WeightLayout packed(const std::vector<std::pair<std::string, Shape>>& weights);
};

// Weights about to be written hold NaN or Inf: the readers refuse such
// files, so they are never written. what(): "refusing to write weights that
// are not finite: " + detail.
class NonFiniteWeights : public RuntimeError {
 public:
  explicit NonFiniteWeights(const std::string& detail)
      : RuntimeError("refusing to write weights that are not finite: " + detail), detail(detail) {}
  std::string detail;  // "conv2d/kernel holds nan at element 3"
};

// NonFiniteWeights naming the tensor and the first value that is not finite.
void check_finite_for_writing(const std::string& name, std::span<const float> values);

// Adds `flat` (a replica's flat buffer of values, or an optimizer's state buffer), cut into
// the layout's tensors; NonFiniteWeights for a NaN or Inf.
void add_weight_tensors(io::SafetensorsWriter& w, const std::string& prefix, const Tensor& flat,
                        const WeightLayout& layout);

// The flat buffer (padding zero) from the file's tensors prefix + name.
// UsageError naming the first weight whose tensor is missing, not F32, of
// another shape, or holds a value that is not finite.
std::vector<float> weight_tensors_from(const io::SafetensorsFile& f, const std::string& prefix,
                                       const WeightLayout& layout);

}  // namespace axon::train
