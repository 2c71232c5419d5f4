#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>

#include <cmath>

namespace axon::nn {

std::pair<double, double> compute_fans(const Shape& shape) {
  if (shape.size() < 2) throw RuntimeError("compute_fans: kernel shape " + shape_string(shape) + " has rank < 2");
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
  return {static_cast<double>(shape[shape.size() - 2]) * receptive,
          static_cast<double>(shape[shape.size() - 1]) * receptive};
}

std::vector<float> glorot_uniform(const Shape& shape, Rng& rng) {
  auto [fan_in, fan_out] = compute_fans(shape);
  const auto limit = static_cast<float>(std::sqrt(6.0 / (fan_in + fan_out)));
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = rng.uniform(-limit, limit);
  return v;
}

Tensor make_tensor(Device& device, const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(device, AXON_FLOAT32, shape, values);
}

Tensor zeros(Device& device, const Shape& shape) {
  return make_tensor(device, shape, std::vector<float>(static_cast<size_t>(numel(shape)), 0.0f));
}

}  // namespace axon::nn
