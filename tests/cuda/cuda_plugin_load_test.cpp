// The CUDA plugin on any machine: it loads through the C ABI, names itself,
// and either lists devices with their facts or reports zero devices with a
// non-empty reason. Its load must not pull in cudart, cuDNN, cuBLAS or NCCL
// (those live in the kernel library, loaded only when a device is there).
// Runs in CI (no GPU needed). The plugin path comes from AXON_CUDA_PLUGIN.
// The cases tagged [.no-device] and [.devices] need a driver that shows no
// device, or devices: ctest runs them against the fake driver
// (fake_libcuda.cpp) set up each way, so they run on every machine.
#include <catch2/catch.hpp>

#include "plugin_harness.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace axon::test;

namespace {

std::string plugin_path() {
  const char* p = std::getenv("AXON_CUDA_PLUGIN");
  REQUIRE(p != nullptr);
  return p;
}

// The shared objects mapped into this process.
std::string mapped_files() {
  std::ifstream maps("/proc/self/maps");
  return std::string(std::istreambuf_iterator<char>(maps), std::istreambuf_iterator<char>());
}

LoadedPlugin& plugin() {
  static LoadedPlugin p(plugin_path());
  return p;
}

}  // namespace

TEST_CASE("the CUDA plugin loads and describes itself", "[cuda]") {
  auto t0 = std::chrono::steady_clock::now();
  LoadedPlugin& p = plugin();
  const int count = p.device_count();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN("load + device_count took " << ms << " ms, " << count << " device(s)");
  CHECK(std::string(p.api.name) == "cuda");
  CHECK(std::string(p.api.device_type) == "GPU");
  CHECK(p.api.priority == 200);
  CHECK(p.api.abi_major == AXON_ABI_MAJOR);
  REQUIRE(p.api.unavailable_reason != nullptr);
  REQUIRE(p.api.excluded_count != nullptr);
  REQUIRE(p.api.collectives != nullptr);
  // The count and the device table agree: ids below it have properties, the next does not.
  for (int i = 0; i < count; ++i) {
    axon_device_props props{};
    props.struct_size = sizeof props;
    axon_error err{};
    CHECK(p.api.get_device_props(p.api.plugin_ctx, i, &props, &err) == AXON_OK);
  }
  axon_device_props past{};
  past.struct_size = sizeof past;
  axon_error err{};
  CHECK(p.api.get_device_props(p.api.plugin_ctx, count, &past, &err) == AXON_INVALID_ARGUMENT);
}

TEST_CASE("with no device the plugin says why, and opening fails cleanly", "[cuda][.no-device]") {
  LoadedPlugin& p = plugin();
  REQUIRE(p.device_count() == 0);
  const char* reason = p.api.unavailable_reason(p.api.plugin_ctx);
  REQUIRE(reason != nullptr);
  CHECK(std::string(reason).size() > 10);
  WARN("unavailable_reason: " << reason);
  axon_device_props props{};
  props.struct_size = sizeof props;
  axon_error err{};
  CHECK(p.api.get_device_props(p.api.plugin_ctx, 0, &props, &err) == AXON_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("does not exist") != std::string::npos);
  axon_device_config cfg{};
  cfg.struct_size = sizeof cfg;
  const axon_device_api* api = nullptr;
  axon_error err2{};
  CHECK(p.api.open_device(p.api.plugin_ctx, 0, &cfg, &api, &err2) == AXON_UNAVAILABLE);
  CHECK(std::string(err2.message).find(reason) != std::string::npos);
}

TEST_CASE("devices carry their facts; excluded ones a reason", "[cuda][.devices]") {
  LoadedPlugin& p = plugin();
  REQUIRE(p.device_count() > 0);
  REQUIRE(p.api.excluded_count(p.api.plugin_ctx) > 0);
  for (int i = 0; i < p.device_count(); ++i) {
    axon_device_props props{};
    props.struct_size = sizeof props;
    axon_error err{};
    REQUIRE(p.api.get_device_props(p.api.plugin_ctx, i, &props, &err) == AXON_OK);
    CHECK(std::string(props.name).size() > 0);
    CHECK(props.compute_major * 10 + props.compute_minor >= 60);
    CHECK(props.memory_total > 0);
    CHECK(std::string(props.uuid).rfind("GPU-", 0) == 0);
    CHECK(std::string(props.pci_bus_id).size() > 0);
  }
  for (int i = 0; i < p.api.excluded_count(p.api.plugin_ctx); ++i) {
    axon_excluded_device x{};
    x.struct_size = sizeof x;
    axon_error err{};
    REQUIRE(p.api.get_excluded(p.api.plugin_ctx, i, &x, &err) == AXON_OK);
    CHECK(std::string(x.reason).size() > 0);
  }
}

TEST_CASE("loading the plugin pulls in no CUDA library when there is no device", "[cuda][.no-device]") {
  LoadedPlugin& p = plugin();
  REQUIRE(p.device_count() == 0);
  const std::string maps = mapped_files();
  for (const char* lib : {"libcudart", "libcudnn", "libcublas", "libnccl", "libaxon-cuda-kernels"}) {
    INFO(lib);
    CHECK(maps.find(lib) == std::string::npos);
  }
}
