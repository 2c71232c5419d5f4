// gpus = tf.config.list_physical_devices('GPU')
// for gpu in gpus: tf.config.experimental.set_memory_growth(gpu, True)
// logical_gpus = tf.config.list_logical_devices('GPU')
// print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
// An optional argument MB sets a memory limit instead (the guide's
// set_logical_device_configuration(gpus[0], [LogicalDeviceConfiguration(memory_limit=1024)])).
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  try {
    const auto gpus = axon::config::list_physical_devices("GPU");
    try {
      for (const axon::PhysicalDevice& gpu : gpus) {
        if (argc > 1)
          axon::config::set_logical_device_configuration(gpu, {{.memory_limit = std::atoll(argv[1])}});
        else
          axon::config::experimental::set_memory_growth(gpu, true);
      }
      const auto logical = axon::config::list_logical_devices("GPU");
      std::printf("%zu Physical GPUs, %zu Logical GPUs\n", gpus.size(), logical.size());
      for (const axon::PhysicalDevice& gpu : gpus)
        std::printf("%s memory growth: %s\n", gpu.name.c_str(),
                    axon::config::experimental::get_memory_growth(gpu) ? "on" : "off");
    } catch (const axon::RuntimeError& e) {
      std::printf("%s\n", e.what());  // memory growth must be set before the GPUs are initialised
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memory_growth: error: %s\n", e.what());
    return 1;
  }
}
