// axon::config: physical and logical devices, visibility, logical CPU
// devices, and TensorFlow's RuntimeError once the devices are initialised.
// Each TEST_CASE runs in its own process.
#include "api_fixture.hpp"

#include <catch2/catch.hpp>

using namespace axon;

namespace {
std::vector<std::string> names(const std::vector<LogicalDevice>& ds) {
  std::vector<std::string> n;
  for (const LogicalDevice& d : ds) n.push_back(d.name);
  return n;
}
}  // namespace

TEST_CASE("physical and logical devices", "[api][config]") {
  test::start_runtime();
  const std::vector<PhysicalDevice> cpus = config::list_physical_devices("CPU");
  REQUIRE(cpus.size() == 1);
  CHECK(cpus[0] == PhysicalDevice{"/physical_device:CPU:0", "CPU"});
  CHECK(config::list_physical_devices("gpu").size() == static_cast<size_t>(Runtime::get().count("GPU")));
  CHECK(config::list_physical_devices("REF").size() == 1);
  CHECK_FALSE(Runtime::get().devices_opened());  // listing initialises nothing
  const std::vector<LogicalDevice> logical = config::list_logical_devices("CPU");
  CHECK(logical == std::vector<LogicalDevice>{{"/device:CPU:0", "CPU"}});
  CHECK(Runtime::get().devices_opened());
  CHECK(config::get_visible_devices().size() == config::list_physical_devices().size());
}

TEST_CASE("set_visible_devices before initialisation hides a type", "[api][config]") {
  test::start_runtime();
  const auto all = config::list_physical_devices();
  config::set_visible_devices({}, "REF");
  CHECK(config::list_physical_devices().size() == all.size());  // physical devices stay
  CHECK(config::get_visible_devices("REF").empty());
  CHECK(names(config::list_logical_devices("REF")).empty());
  CHECK(names(config::list_logical_devices("CPU")) == std::vector<std::string>{"/device:CPU:0"});
  // No longer a device: soft placement runs its scope on the CPU.
  CHECK(device("/device:REF:0").device_name() == "/device:CPU:0");
}

TEST_CASE("visibility cannot change once the devices are initialised", "[api][config][errors]") {
  test::start_runtime();
  config::list_logical_devices();
  CHECK_THROWS_AS(config::set_visible_devices({}, "REF"), RuntimeError);
  CHECK_THROWS_WITH(config::set_visible_devices({}, "REF"), "Visible devices cannot be modified after being initialized");
  // Setting what is already so is no change, and no error.
  CHECK_NOTHROW(config::set_visible_devices(config::list_physical_devices("REF"), "REF"));
  CHECK_THROWS_WITH(config::set_logical_device_configuration(config::list_physical_devices("CPU")[0], {{}, {}}),
                    "Virtual devices cannot be modified after being initialized");
  // The placement log may change at any time.
  CHECK_NOTHROW(debugging::set_log_device_placement(true));
}

TEST_CASE("an eager op initialises the devices too", "[api][config][errors]") {
  test::start_runtime();
  math::reduce_sum(ones({4}));
  CHECK_THROWS_WITH(config::set_visible_devices({}, "REF"), "Visible devices cannot be modified after being initialized");
}

TEST_CASE("bad device arguments name what is wrong", "[api][config][errors]") {
  test::start_runtime();
  const PhysicalDevice cpu = config::list_physical_devices("CPU").at(0);
  CHECK_THROWS_WITH(config::set_visible_devices({{"/physical_device:GPU:3", "GPU"}}, "GPU"),
                    Catch::StartsWith("no physical device /physical_device:GPU:3; physical devices: "
                                      "/physical_device:CPU:0"));
  CHECK_THROWS_WITH(config::set_visible_devices({cpu}, "GPU"), "set_visible_devices: /physical_device:CPU:0 is not a GPU device");
  CHECK_THROWS_WITH(config::experimental::set_memory_growth(cpu, true),
                    "set_memory_growth: /physical_device:CPU:0 is not a GPU (memory growth is a GPU setting)");
  CHECK_THROWS_AS(config::set_logical_device_configuration(cpu, {{.memory_limit = 1024}}), UsageError);
  CHECK_THROWS_WITH(config::set_visible_devices({}, ""), Catch::StartsWith("set_visible_devices would leave no device visible"));
}

TEST_CASE("two logical CPU devices from one physical CPU", "[api][config]") {
  test::start_runtime();
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  CHECK(names(config::list_logical_devices("CPU")) == std::vector<std::string>{"/device:CPU:0", "/device:CPU:1"});
  auto scope = device("/CPU:1");
  CHECK(add(ones({2}), ones({2})).device().name() == "/device:CPU:1");
  distribute::MirroredStrategy strategy({"/cpu:0", "/cpu:1"});
  CHECK(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.devices() == std::vector<std::string>{"/device:CPU:0", "/device:CPU:1"});
}

TEST_CASE("the runtime starts from the environment when the program did not start it", "[api][config]") {
  REQUIRE_FALSE(Runtime::initialised());
  ::setenv("AXON_VISIBLE_DEVICES", "cpu:0", 1);
  CHECK(config::list_physical_devices("CPU").size() == 1);
  CHECK(Runtime::initialised());
  CHECK(config::get_visible_devices("REF").empty());
}
