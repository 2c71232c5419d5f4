// The model's weights as safetensors tensors, one per parameter, named by the
// parameter's Keras name with a prefix ("conv2d/kernel", "optimizer/m/conv2d/kernel")
// and in Keras' layouts (Conv2D kernels HWIO, Dense [in, out]). Checkpoints
// and safetensors weights files share this naming.
#pragma once

#include <axon/io/safetensors.hpp>
#include <axon/nn/layer.hpp>

#include <string>
#include <vector>

namespace axon::train {

// Adds `flat` (a replica's flat buffer of values, or Adam's m or v), cut into
// the parameters' tensors at `offsets` (ParameterBuffers::offsets()).
void add_weight_tensors(io::SafetensorsWriter& w, const std::string& prefix, const Tensor& flat,
                        const std::vector<nn::Parameter*>& params, const std::vector<int64_t>& offsets);

// The flat buffer of `floats` floats (padding zero) from the file's tensors
// prefix + name. UsageError naming the first parameter whose tensor is
// missing, not F32, of another shape, or holds a value that is not finite.
std::vector<float> weight_tensors_from(const io::SafetensorsFile& f, const std::string& prefix,
                                       const std::vector<nn::Parameter*>& params,
                                       const std::vector<int64_t>& offsets, int64_t floats);

}  // namespace axon::train
