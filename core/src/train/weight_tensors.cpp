#include <axon/error.hpp>
#include <axon/train/weight_tensors.hpp>

#include <algorithm>
#include <cmath>
#include <span>

namespace axon::train {

WeightLayout WeightLayout::of(nn::Replica& replica, bool trainable_only) {
  WeightLayout l;
  const std::vector<nn::Parameter*> params = replica.parameters();
  const std::vector<int64_t>& offsets = replica.buffers().offsets();
  for (size_t i = 0; i < params.size(); ++i) {
    if (trainable_only && !params[i]->trainable) continue;
    l.names.push_back(params[i]->name);
    l.shapes.push_back(params[i]->value.shape());
    l.offsets.push_back(offsets[i]);
  }
  l.floats = trainable_only ? replica.buffers().trainable_floats() : replica.buffers().values().numel();
  return l;
}

WeightLayout WeightLayout::packed(const std::vector<std::pair<std::string, Shape>>& weights) {
  WeightLayout l;
  for (const auto& [name, shape] : weights) {
    l.names.push_back(name);
    l.shapes.push_back(shape);
    l.offsets.push_back(l.floats);
    l.floats += numel(shape);
  }
  return l;
}

void check_finite_for_writing(const std::string& name, std::span<const float> values) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw NonFiniteWeights(name + " holds " + (std::isnan(values[i]) ? "nan" : values[i] < 0 ? "-inf" : "inf") +
                             " at element " + std::to_string(i));
}

void add_weight_tensors(io::SafetensorsWriter& w, const std::string& prefix, const Tensor& flat,
                        const WeightLayout& layout) {
  const std::vector<float> host = flat.to_vector<float>();
  for (size_t i = 0; i < layout.names.size(); ++i) {
    if (layout.offsets[i] + numel(layout.shapes[i]) > static_cast<int64_t>(host.size()))
      throw RuntimeError("weights: " + prefix + layout.names[i] + " lies beyond its buffer of " +
                         std::to_string(host.size()) + " floats");
    const std::span<const float> values(host.data() + layout.offsets[i], static_cast<size_t>(numel(layout.shapes[i])));
    check_finite_for_writing(prefix + layout.names[i], values);
    w.add_f32(prefix + layout.names[i], layout.shapes[i], values);
  }
}

std::vector<float> weight_tensors_from(const io::SafetensorsFile& f, const std::string& prefix,
                                       const WeightLayout& layout) {
  std::vector<float> flat(static_cast<size_t>(layout.floats), 0.0f);
  for (size_t i = 0; i < layout.names.size(); ++i) {
    const std::vector<float> v = f.f32(prefix + layout.names[i], layout.shapes[i]);
    for (size_t k = 0; k < v.size(); ++k)
      if (!std::isfinite(v[k]))
        throw UsageError("tensor " + prefix + layout.names[i] + " holds " +
                         (std::isnan(v[k]) ? "nan" : v[k] < 0 ? "-inf" : "inf") + " at element " + std::to_string(k) +
                         "; weights must be finite");
    std::copy(v.begin(), v.end(), flat.begin() + layout.offsets[i]);
  }
  return flat;
}

}  // namespace axon::train
