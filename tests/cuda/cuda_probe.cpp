// What the CUDA plugin sees, as tools/gpu-check's first GPU stage: each usable
// device, each excluded one with its reason, and a verdict line.
//
//   cuda_probe <libaxon-plugin-cuda.so>
//
// Exit: 0 a usable device ("GPU: ..." lines), 77 the driver reports no device
// ("SKIP: no CUDA device: <reason>"), 1 the driver shows devices the plugin
// cannot use ("FAIL: unusable CUDA device: <reason>", e.g. the kernel library
// or cuDNN does not load), 2 bad usage. Opens no device. Plain C++ (no Catch2).
#include "device_presence.hpp"
#include "plugin_harness.hpp"

#include <cstdio>
#include <exception>

using namespace axon::test;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <libaxon-plugin-cuda.so>\n", argv[0]);
    return 2;
  }
  try {
    LoadedPlugin cuda(argv[1]);
    const int n = cuda.device_count();
    for (int i = 0; i < n; ++i) {
      axon_device_props props{};
      props.struct_size = sizeof props;
      axon_error err{};
      check(cuda.api.get_device_props(cuda.api.plugin_ctx, i, &props, &err), err, "get_device_props");
      std::printf("GPU: %d: %s, compute capability %d.%d, %.1f GiB (%.1f GiB free), %s, %s\n", i, props.name,
                  props.compute_major, props.compute_minor, props.memory_total / 1073741824.0,
                  props.memory_free / 1073741824.0, props.pci_bus_id, props.description);
    }
    const int excluded = cuda.api.excluded_count ? cuda.api.excluded_count(cuda.api.plugin_ctx) : 0;
    for (int i = 0; i < excluded; ++i) {
      axon_excluded_device x{};
      x.struct_size = sizeof x;
      axon_error err{};
      check(cuda.api.get_excluded(cuda.api.plugin_ctx, i, &x, &err), err, "get_excluded");
      std::printf("excluded: %s (CUDA ordinal %d): %s\n", x.name, x.physical_id, x.reason);
    }
    if (auto code = exit_without_device(cuda, "CUDA device")) return *code;
    std::printf("PASS: %d usable CUDA device(s)\n", n);
    return 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
