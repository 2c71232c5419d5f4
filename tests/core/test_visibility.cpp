// Visible-device filtering with the logical -> physical map, logical CPU
// devices, and device lookup by any spelling. Uses the build tree's plugins.
#include "runtime_fixture.hpp"

#include <axon/error.hpp>
#include <axon/runtime.hpp>
#include <axon/tensor.hpp>

#include <catch2/catch.hpp>

using namespace axon;
using Catch::Matchers::Contains;

namespace {

const ExcludedDevice* excluded_named(const Runtime& rt, const std::string& name) {
  for (const auto& e : rt.excluded())
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("cpu_devices = 2 gives two logical CPU devices", "[visibility]") {
  Config c = test::test_config();
  c.cpu_devices = 2;
  Runtime& rt = Runtime::init(c);
  REQUIRE(rt.count("CPU") == 2);
  CHECK(rt.device("cpu:0").physical_id() == 0);
  CHECK(rt.device("cpu:1").physical_id() == 1);
  CHECK(rt.cpu_device() == &rt.device("cpu:0"));
  // They are separate devices: memory of one is not the other's.
  Tensor a(rt.device("cpu:0"), AXON_FLOAT32, {8});
  Tensor b = a.to(rt.device("cpu:1"));
  CHECK(&b.device() == &rt.device("cpu:1"));
  // A plugin's collectives, when it has them, are seen through every device.
  if (rt.device("cpu:0").plugin_api().collectives != nullptr) {
    REQUIRE(rt.device("cpu:0").collectives() != nullptr);
    CHECK(rt.device("cpu:0").collectives()->all_reduce != nullptr);
  }
}

TEST_CASE("visible devices are renumbered in the order given and the physical map is kept", "[visibility]") {
  Config c = test::test_config();
  c.cpu_devices = 2;
  c.visible_devices = "/device:CPU:1, cpu:0";
  c.visible_devices_source = "--visible-devices";
  Runtime& rt = Runtime::init(c);
  REQUIRE(rt.count("CPU") == 2);
  Device& first = rt.device("cpu:0");
  Device& second = rt.device("cpu:1");
  CHECK(first.physical_id() == 1);
  CHECK(first.original_name() == "/device:CPU:1");
  CHECK(second.physical_id() == 0);
  CHECK(second.original_name() == "/device:CPU:0");
  // Devices not named are excluded, with the reason and where it came from.
  bool have_ref = false;
  for (const auto& p : rt.plugins()) have_ref |= p.device_type == "REF" && p.device_count > 0;
  if (have_ref) {
    REQUIRE(excluded_named(rt, "/device:REF:0") != nullptr);
    CHECK(excluded_named(rt, "/device:REF:0")->reason == "filtered by --visible-devices");
  }
  CHECK(rt.count("REF") == 0);
}

TEST_CASE("a filtered device is listed as excluded by AXON_VISIBLE_DEVICES", "[visibility]") {
  Config c = test::test_config();
  c.cpu_devices = 2;
  c.visible_devices = "cpu:1";
  Runtime& rt = Runtime::init(c);
  REQUIRE(rt.count("CPU") == 1);
  CHECK(rt.device("cpu:0").original_name() == "/device:CPU:1");
  const ExcludedDevice* e = excluded_named(rt, "/device:CPU:0");
  REQUIRE(e != nullptr);
  CHECK(e->reason == "filtered by AXON_VISIBLE_DEVICES");
  CHECK(e->physical_id == 0);
  CHECK_THROWS_AS(rt.device("cpu:1"), UsageError);
}

TEST_CASE("a visible-device name that matches nothing is a usage error listing the devices", "[visibility]") {
  Config c = test::test_config();
  c.cpu_devices = 2;
  c.visible_devices = "cpu:0,gpu:99";
  try {
    Runtime::init(c);
    FAIL("init accepted gpu:3");
  } catch (const UsageError& e) {
    std::string msg = e.what();
    CHECK_THAT(msg, Contains("AXON_VISIBLE_DEVICES names /device:GPU:99, which does not exist ("));
    CHECK_THAT(msg, Contains("); devices: "));
    CHECK_THAT(msg, Contains("/device:CPU:0, /device:CPU:1"));
  }
  CHECK_FALSE(Runtime::initialised());
}

TEST_CASE("malformed and repeated visible-device lists are usage errors", "[visibility]") {
  Config c = test::test_config();
  c.visible_devices = "cpu:x";
  CHECK_THROWS_WITH(Runtime::init(c), Contains("bad device name 'cpu:x'"));
  c.visible_devices = "cpu:0,CPU:0";
  CHECK_THROWS_WITH(Runtime::init(c), Contains("names /device:CPU:0 twice"));
  c.visible_devices = " , ";
  CHECK_THROWS_WITH(Runtime::init(c), Contains("names no device"));
}

TEST_CASE("devices are found by any accepted spelling", "[visibility]") {
  Runtime& rt = Runtime::init(test::test_config());
  Device& cpu = rt.device("/device:CPU:0");
  CHECK(&rt.device("cpu:0") == &cpu);
  CHECK(&rt.device("CPU") == &cpu);
  CHECK(&rt.device("/cpu:0") == &cpu);
  CHECK(rt.find_device("cpu:5") == nullptr);
  CHECK_THROWS_WITH(rt.device("gpu:99"), Contains("no device /device:GPU:99; visible devices: ") &&
                                            Contains("/device:CPU:0"));
  CHECK(cpu.name() == "/device:CPU:0");
  CHECK(cpu.type() == "CPU");
  CHECK(cpu.priority() == 100);
  CHECK(cpu.plugin_name() == "cpu");
  CHECK(rt.count("gpu") == rt.count("cuda"));
}
