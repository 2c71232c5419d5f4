// tf.debugging.set_log_device_placement(True)
// a = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
// b = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
// c = tf.matmul(a, b); print(c)
#include <axon/axon.hpp>

#include <cstdio>

int main() {
  try {
    axon::debugging::set_log_device_placement(true);
    const axon::Tensor a = axon::constant({1, 2, 3, 4, 5, 6}, {2, 3});
    const axon::Tensor b = axon::constant({1, 2, 3, 4, 5, 6}, {3, 2});
    const axon::Tensor c = axon::matmul(a, b);
    std::fflush(stderr);  // the placement line first, as TensorFlow prints it
    std::printf("%s\n", axon::to_string(c).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "log_placement: error: %s\n", e.what());
    return 1;
  }
}
