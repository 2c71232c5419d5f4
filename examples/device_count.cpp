// print("Num GPUs Available: ", len(tf.config.list_physical_devices('GPU')))
#include <axon/axon.hpp>

#include <cstdio>

int main() {
  try {
    std::printf("Num GPUs Available: %zu\n", axon::config::list_physical_devices("GPU").size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "device_count: error: %s\n", e.what());
    return 1;
  }
}
