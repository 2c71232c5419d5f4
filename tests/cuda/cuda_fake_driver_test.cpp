// The CUDA plugin's device discovery against a fake driver (fake_libcuda.cpp,
// found through LD_LIBRARY_PATH), one scenario per process:
//
//   cuda_fake_driver_test <plugin.so> two-devices    H200 (9.0) usable, an old 5.2 GPU excluded
//   cuda_fake_driver_test <plugin.so> no-device      cuInit fails: the reason names the error
//   cuda_fake_driver_test <plugin.so> no-kernels     plugin copied where its kernel library is
//                                                    not: the devices are excluded, with reason
//   cuda_fake_driver_test <plugin.so> visible-devices  CUDA_VISIBLE_DEVICES=2,0 over three GPUs:
//                                                    axon numbers what the driver shows
//   cuda_fake_driver_test <plugin.so> visible-none   CUDA_VISIBLE_DEVICES="": the reason names it
//   cuda_fake_driver_test <plugin.so> min-compute    AXON_CUDA_MIN_COMPUTE=8.5 excludes an 8.0 GPU,
//                                                    =5.0 (min-compute-low) keeps a 5.2 one
// Runs without a GPU (label cuda). Exit 0 pass, 1 fail.
#include "plugin_harness.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

using namespace axon::test;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string reason_of(const LoadedPlugin& p) {
  const char* r = p.api.unavailable_reason(p.api.plugin_ctx);
  return r ? r : "";
}

std::vector<axon_excluded_device> excluded(const LoadedPlugin& p) {
  std::vector<axon_excluded_device> out;
  for (int i = 0; i < p.api.excluded_count(p.api.plugin_ctx); ++i) {
    axon_excluded_device x{};
    x.struct_size = sizeof x;
    axon_error err{};
    check(p.api.get_excluded(p.api.plugin_ctx, i, &x, &err), err, "get_excluded");
    out.push_back(x);
  }
  return out;
}

axon_status try_open(const LoadedPlugin& p, int id, std::string& message) {
  axon_device_config cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.memory_mode = AXON_MEMORY_GROWTH;
  const axon_device_api* api = nullptr;
  axon_error err{};
  axon_status s = p.api.open_device(p.api.plugin_ctx, id, &cfg, &api, &err);
  message = err.message;
  if (s == AXON_OK && api != nullptr && api->close) api->close(api->device_ctx);
  return s;
}

// Three GPUs for the visibility and minimum-capability scenarios.
constexpr const char* kThree = "GPU A:9.0:80000000000;GPU B:8.0:40000000000;Old C:5.2:4000000000";

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: %s <libaxon-plugin-cuda.so> two-devices|no-device|no-kernels|visible-devices|visible-none|"
                 "min-compute|min-compute-low\n",
                 argv[0]);
    return 2;
  }
  const std::string scenario = argv[2];
  try {
    if (scenario == "two-devices") {
      setenv("FAKE_CUDA_DEVICES", "NVIDIA H200:9.0:150000000000;Old GPU:5.2:4000000000", 1);
      LoadedPlugin p(argv[1]);
      expect(p.device_count() == 1, "one usable device of two");
      axon_device_props props{};
      props.struct_size = sizeof props;
      axon_error err{};
      check(p.api.get_device_props(p.api.plugin_ctx, 0, &props, &err), err, "get_device_props");
      expect(std::string(props.name) == "NVIDIA H200", std::string("name: ") + props.name);
      expect(props.compute_major == 9 && props.compute_minor == 0, "compute capability 9.0");
      expect(props.memory_total == 150000000000ull, "total memory");
      expect(props.memory_free == 150000000000ull - 1500000000ull, "free memory through the primary context");
      expect(std::string(props.pci_bus_id) == "0000:10:00.0", std::string("PCI bus id: ") + props.pci_bus_id);
      expect(std::string(props.uuid) == "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f", std::string("UUID: ") + props.uuid);
      expect(contains(props.description, "cuda_ordinal=0") && contains(props.description, "multiprocessors=132"),
             std::string("description: ") + props.description);
      auto ex = excluded(p);
      expect(ex.size() == 1, "one excluded device");
      if (!ex.empty()) {
        std::printf("       excluded: %s: %s\n", ex[0].name, ex[0].reason);
        expect(std::string(ex[0].name) == "Old GPU" && ex[0].physical_id == 1, "the old GPU is the excluded one");
        expect(contains(ex[0].reason, "compute capability 5.2 is below the minimum"), "its reason names the capability");
      }
      expect(reason_of(p).empty(), "no unavailable_reason while a device is usable");
      // The kernel library loads (it is next to the plugin) but cudart cannot
      // use a fake driver: opening must fail with a message, not crash.
      std::string msg;
      axon_status s = try_open(p, 0, msg);
      std::printf("       open_device: status %d: %s\n", static_cast<int>(s), msg.c_str());
      expect(s != AXON_OK && !msg.empty(), "opening on a fake driver fails with a message");
      expect(try_open(p, 1, msg) == AXON_INVALID_ARGUMENT && contains(msg, "does not exist"), "device 1 does not exist");
    } else if (scenario == "no-device") {
      setenv("FAKE_CUDA_DEVICES", "", 1);
      LoadedPlugin p(argv[1]);
      expect(p.device_count() == 0, "no device");
      const std::string r = reason_of(p);
      std::printf("       reason: %s\n", r.c_str());
      expect(contains(r, "cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"), "reason names cuInit's error");
      std::string msg;
      expect(try_open(p, 0, msg) == AXON_UNAVAILABLE && contains(msg, "CUDA_ERROR_NO_DEVICE"), "open fails: " + msg);
    } else if (scenario == "no-kernels") {
      setenv("FAKE_CUDA_DEVICES", "NVIDIA H200:9.0:150000000000;Old GPU:5.2:4000000000", 1);
      namespace fs = std::filesystem;
      fs::path dir = fs::temp_directory_path() / ("axon-cuda-nokernels-" + std::to_string(getpid()));
      fs::create_directories(dir);
      fs::copy_file(argv[1], dir / "libaxon-plugin-cuda.so", fs::copy_options::overwrite_existing);
      unsetenv("AXON_CUDA_KERNELS_DIR");
      LoadedPlugin p((dir / "libaxon-plugin-cuda.so").string());
      expect(p.device_count() == 0, "no usable device without the kernel library");
      const std::string r = reason_of(p);
      std::printf("       reason: %s\n", r.c_str());
      expect(contains(r, "libaxon-cuda-kernels.so") && contains(r, "cannot open shared object file") &&
                 contains(r, "searched: " + dir.string()),
             "reason names the library, the loader's message and the folder searched");
      auto ex = excluded(p);
      expect(ex.size() == 2, "both devices excluded");
      bool h200 = false;
      for (auto& x : ex) h200 = h200 || (std::string(x.name) == "NVIDIA H200" && contains(x.reason, "libaxon-cuda-kernels.so"));
      expect(h200, "the H200 is excluded because of the kernel library");
      std::string msg;
      expect(try_open(p, 0, msg) == AXON_UNAVAILABLE && contains(msg, "libaxon-cuda-kernels.so"), "open fails: " + msg);
      fs::remove_all(dir);
    } else if (scenario == "visible-devices") {
      // docs/cli.md: "honoured as the CUDA driver does, before axon's own
      // filtering": the driver shows devices 2 and 0, in that order.
      setenv("FAKE_CUDA_DEVICES", kThree, 1);
      setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
      LoadedPlugin p(argv[1]);
      expect(p.device_count() == 1, "one usable device: GPU A (Old C is too old)");
      axon_device_props props{};
      props.struct_size = sizeof props;
      axon_error err{};
      check(p.api.get_device_props(p.api.plugin_ctx, 0, &props, &err), err, "get_device_props");
      expect(std::string(props.name) == "GPU A", std::string("physical id 0 is GPU A: ") + props.name);
      expect(contains(props.description, "cuda_ordinal=1"), std::string("at the driver's ordinal 1: ") + props.description);
      auto ex = excluded(p);
      expect(ex.size() == 1 && std::string(ex[0].name) == "Old C" && contains(ex[0].reason, "CUDA ordinal 0"),
             "Old C, the driver's ordinal 0, is excluded; GPU B is not shown at all");
    } else if (scenario == "visible-none") {
      setenv("FAKE_CUDA_DEVICES", kThree, 1);
      setenv("CUDA_VISIBLE_DEVICES", "", 1);
      LoadedPlugin p(argv[1]);
      expect(p.device_count() == 0 && excluded(p).empty(), "no device, none excluded");
      std::printf("       reason: %s\n", reason_of(p).c_str());
      expect(contains(reason_of(p), "CUDA_VISIBLE_DEVICES=\"\""), "the reason names CUDA_VISIBLE_DEVICES");
    } else if (scenario == "min-compute" || scenario == "min-compute-low") {
      const bool low = scenario == "min-compute-low";
      setenv("FAKE_CUDA_DEVICES", kThree, 1);
      setenv("AXON_CUDA_MIN_COMPUTE", low ? "5.0" : "8.5", 1);
      LoadedPlugin p(argv[1]);
      if (low) {
        expect(p.device_count() == 3 && excluded(p).empty(), "with a minimum of 5.0 all three are offered");
      } else {
        expect(p.device_count() == 1, "with a minimum of 8.5 only GPU A (9.0) is offered");
        auto ex = excluded(p);
        bool b = false;
        for (auto& x : ex)
          b = b || (std::string(x.name) == "GPU B" && contains(x.reason, "compute capability 8.0 is below the minimum 8.5"));
        expect(ex.size() == 2 && b, "GPU B (8.0) and Old C (5.2) are excluded, B with the minimum in its reason");
      }
    } else {
      std::fprintf(stderr, "unknown scenario '%s'\n", scenario.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("SUMMARY: %s: scenario %s, %d failure(s)\n", failures ? "FAIL" : "PASS", scenario.c_str(), failures);
  return failures ? 1 : 0;
}
