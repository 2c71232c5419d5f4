// The model's weights as safetensors tensors, one per parameter, named by the
// parameter's Keras name with a prefix ("conv2d/kernel", "optimizer/m/conv2d/kernel")
// and in Keras' layouts (Conv2D kernels HWIO, Dense [in, out]). Checkpoints
// and safetensors weights files share this naming.
#pragma once

#include <axon/io/safetensors.hpp>
#include <axon/nn/replica.hpp>

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

  // A replica's parameters in its flat buffers (ParameterBuffers).
  static WeightLayout of(nn::Replica& replica);
  // Weights known by name and shape alone (no device), packed end to end.
  static WeightLayout packed(const std::vector<std::pair<std::string, Shape>>& weights);
};

// Adds `flat` (a replica's flat buffer of values, or Adam's m or v), cut into
// the layout's tensors.
void add_weight_tensors(io::SafetensorsWriter& w, const std::string& prefix, const Tensor& flat,
                        const WeightLayout& layout);

// The flat buffer (padding zero) from the file's tensors prefix + name.
// UsageError naming the first weight whose tensor is missing, not F32, of
// another shape, or holds a value that is not finite.
std::vector<float> weight_tensors_from(const io::SafetensorsFile& f, const std::string& prefix,
                                       const WeightLayout& layout);

}  // namespace axon::train
