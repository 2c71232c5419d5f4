// tf.config.set_visible_devices([], 'GPU'): the program runs on the CPU. Once
// the devices are initialised, visibility can no longer change: hiding the
// CPU then is TensorFlow's RuntimeError, caught and printed as the guide does.
#include <axon/axon.hpp>

#include <cstdio>

int main() {
  try {
    const auto gpus = axon::config::list_physical_devices("GPU");
    axon::config::set_visible_devices({}, "GPU");
    const auto logical = axon::config::list_logical_devices();
    std::printf("%zu Physical GPUs, %zu Logical GPUs\n", gpus.size(), axon::config::list_logical_devices("GPU").size());
    for (const axon::LogicalDevice& d : logical) std::printf("Logical device: %s (%s)\n", d.name.c_str(), d.device_type.c_str());
    try {
      axon::config::set_visible_devices({}, "CPU");
    } catch (const axon::RuntimeError& e) {
      std::printf("%s\n", e.what());  // Visible devices cannot be modified after being initialized
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hide_gpu: error: %s\n", e.what());
    return 1;
  }
}
