// Runtime::reconfigure: device settings change until a device opens (the
// plugins' devices counted again, visibility redone, physical devices kept),
// placement settings at any time. Uses the build tree's plugins.
#include "runtime_fixture.hpp"

#include <axon/error.hpp>
#include <axon/runtime.hpp>
#include <axon/tensor.hpp>

#include <catch2/catch.hpp>

using namespace axon;
using Catch::Matchers::Contains;

TEST_CASE("reconfigure recounts devices until one is opened", "[reconfigure]") {
  Runtime& rt = Runtime::init(test::test_config());
  REQUIRE(rt.count("CPU") == 1);
  const size_t physical = rt.physical_devices().size();
  CHECK(rt.physical_devices().front().name == "/device:CPU:0");

  Config c = rt.config();
  c.cpu_devices = 2;
  rt.reconfigure(c);
  CHECK(rt.count("CPU") == 2);  // the CPU plugin counted again under the new setting
  CHECK(rt.physical_devices().size() == physical + 1);

  c.visible_devices = "cpu:1";
  rt.reconfigure(c);
  REQUIRE(rt.devices().size() == 1);
  CHECK(rt.devices()[0]->name() == "/device:CPU:0");
  CHECK(rt.devices()[0]->original_name() == "/device:CPU:1");
  CHECK(rt.physical_devices().size() == physical + 1);  // physical devices stay

  // A bad list leaves the settings as they were.
  Config bad = c;
  bad.visible_devices = "cpu:5";
  CHECK_THROWS_AS(rt.reconfigure(bad), UsageError);
  CHECK(rt.config().visible_devices == c.visible_devices);
  CHECK(rt.devices()[0]->original_name() == "/device:CPU:1");

  CHECK_FALSE(rt.devices_opened());
  Tensor t(rt.device("cpu:0"), AXON_FLOAT32, {4});  // opens /device:CPU:0
  CHECK(rt.devices_opened());
  Config again = c;
  again.visible_devices.reset();
  CHECK_THROWS_WITH(rt.reconfigure(again), Contains("device settings cannot be changed after the devices were "
                                                    "initialised (/device:CPU:0 is in use)"));
  // Placement settings change at any time.
  Config placement = c;
  placement.log_device_placement = true;
  placement.strict_placement = true;
  rt.reconfigure(placement);
  CHECK(rt.config().log_device_placement);
  CHECK(rt.config().strict_placement);
  // Plugin folders are searched once.
  Config folders = placement;
  folders.plugin_dirs.push_back("/tmp");
  CHECK_THROWS_WITH(rt.reconfigure(folders), "plugin folders are searched once, when the runtime starts");
}
