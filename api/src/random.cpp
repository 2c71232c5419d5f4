#include "context.hpp"
#include "philox.hpp"

#include <axon/api/random.hpp>
#include <axon/error.hpp>

namespace axon::random {

Tensor stateless_normal(const Shape& shape, std::array<int64_t, 2> seed, float mean, float stddev) {
  const int64_t n = numel(shape);  // UsageError for a negative dimension
  std::vector<float> v = api_detail::normal_floats(api_detail::stateless_generator(seed[0], seed[1]), n);
  // TensorFlow: add(multiply(rnd, stddev), mean), each rounded to float.
  if (mean != 0.0f || stddev != 1.0f)
    for (float& x : v) {
      const float scaled = x * stddev;
      x = scaled + mean;
    }
  return Tensor::from_vector<float>(api_detail::current_device(), AXON_FLOAT32, shape, v);
}

Tensor normal(const Shape& shape, float mean, float stddev, int64_t seed) {
  return stateless_normal(shape, {seed, 0}, mean, stddev);
}

}  // namespace axon::random
