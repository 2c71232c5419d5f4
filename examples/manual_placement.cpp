// with tf.device('/CPU:0'): print(tf.math.reduce_sum(tf.random.normal([1000, 1000])))
// with tf.device('/GPU:0'): ... the same, on the GPU (or, without one, on the
// CPU after a warning: soft placement). The same seed draws the same numbers
// on both, so the sums agree to float rounding.
#include <axon/axon.hpp>

#include <cmath>
#include <cstdio>

namespace {
float random_sum() {
  const axon::Tensor x = axon::random::normal({1000, 1000}, 0.0f, 1.0f, /*seed=*/1);
  return axon::math::reduce_sum(x).item<float>();
}
}  // namespace

int main() {
  try {
    axon::debugging::set_log_device_placement(true);
    float cpu_sum = 0, gpu_sum = 0;
    {
      auto scope = axon::device("/CPU:0");
      cpu_sum = random_sum();
      std::printf("reduce_sum on %s: %.4f\n", scope.device_name().c_str(), cpu_sum);
    }
    {
      auto scope = axon::device("/GPU:0");
      gpu_sum = random_sum();
      std::printf("reduce_sum on %s: %.4f\n", scope.device_name().c_str(), gpu_sum);
    }
    // The sums of the same million numbers, in each device's order.
    const bool agree = std::fabs(cpu_sum - gpu_sum) <= 1e-3f * 1000.0f;
    std::printf("sums %s\n", agree ? "agree" : "differ");
    return agree ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "manual_placement: error: %s\n", e.what());
    return 1;
  }
}
