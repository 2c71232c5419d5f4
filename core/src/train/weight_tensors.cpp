#include <axon/error.hpp>
#include <axon/train/weight_tensors.hpp>

#include <algorithm>
#include <cmath>
#include <span>

namespace axon::train {

void add_weight_tensors(io::SafetensorsWriter& w, const std::string& prefix, const Tensor& flat,
                        const std::vector<nn::Parameter*>& params, const std::vector<int64_t>& offsets) {
  const std::vector<float> host = flat.to_vector<float>();
  for (size_t i = 0; i < params.size(); ++i) {
    const auto n = static_cast<size_t>(params[i]->value.numel());
    w.add_f32(prefix + params[i]->name, params[i]->value.shape(),
              std::span<const float>(host.data() + offsets[i], n));
  }
}

std::vector<float> weight_tensors_from(const io::SafetensorsFile& f, const std::string& prefix,
                                       const std::vector<nn::Parameter*>& params,
                                       const std::vector<int64_t>& offsets, int64_t floats) {
  std::vector<float> flat(static_cast<size_t>(floats), 0.0f);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<float> v = f.f32(prefix + params[i]->name, params[i]->value.shape());
    for (float x : v)
      if (!std::isfinite(x)) throw UsageError("holds a value that is not finite in " + prefix + params[i]->name);
    std::copy(v.begin(), v.end(), flat.begin() + offsets[i]);
  }
  return flat;
}

}  // namespace axon::train
