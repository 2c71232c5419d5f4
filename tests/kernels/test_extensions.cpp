// Plugin extensions (get_extension): the CPU plugin's axon.timing
// through the C ABI, and the answers for what a plugin does not have.
#include "kernel_test_util.hpp"

#include <axon/client.hpp>

#include <chrono>
#include <thread>

using namespace axon::test;

TEST_CASE("the CPU plugin's axon.timing runs the work iters times and times it", "[extensions]") {
  const auto* timing = axon::client::extension<axon_timing_extension>(cpu_plugin().api, AXON_EXTENSION_TIMING, 1);
  REQUIRE(timing != nullptr);
  struct Work {
    int calls = 0;
  } work;
  auto enqueue = [](void* p) {
    ++static_cast<Work*>(p)->calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  };
  float ms = -1;
  axon_error err{};
  err.struct_size = sizeof err;
  REQUIRE(timing->time_on_stream(cpu().api.device_ctx, enqueue, &work, 5, &ms, &err) == AXON_OK);
  CHECK(work.calls == 5);
  CHECK(ms >= 10.0f);  // five sleeps of 2 ms at least
  CHECK(ms < 10000.0f);
  // Bad arguments are an error, not a crash.
  CHECK(timing->time_on_stream(cpu().api.device_ctx, enqueue, &work, 0, &ms, &err) == AXON_INVALID_ARGUMENT);
  CHECK(timing->time_on_stream(cpu().api.device_ctx, nullptr, &work, 1, &ms, &err) == AXON_INVALID_ARGUMENT);
}

TEST_CASE("get_extension answers NULL for another version, an unknown name, or a plugin without it", "[extensions]") {
  const axon_plugin_api& cpu_api = cpu_plugin().api;
  CHECK(axon::client::extension<axon_timing_extension>(cpu_api, AXON_EXTENSION_TIMING, 2) == nullptr);
  CHECK(axon::client::extension<axon_timing_extension>(cpu_api, "axon.no_such_thing", 1) == nullptr);
  CHECK(cpu_api.get_extension(cpu_api.plugin_ctx, nullptr, 1) == nullptr);
  // The reference plugin has no extension.
  CHECK(axon::client::extension<axon_timing_extension>(ref_plugin().api, AXON_EXTENSION_TIMING, 1) == nullptr);
  // A table that ends before get_extension (an older minor's): never read.
  axon_plugin_api old = cpu_api;
  old.struct_size = AXON_STRUCT_SIZE(axon_plugin_api, collectives);
  CHECK(axon::client::extension<axon_timing_extension>(old, AXON_EXTENSION_TIMING, 1) == nullptr);
}
