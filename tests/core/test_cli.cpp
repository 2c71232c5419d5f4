// apps/common: flags over environment, --plugin-dir before AXON_PLUGIN_PATH,
// and run_main's exit codes and one-line messages.
#include "device_flags.hpp"

#include <axon/cli.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

namespace po = boost::program_options;
using Catch::Matchers::Contains;

namespace {

po::variables_map parse(std::vector<const char*> args) { return axon::test::parse_device_flags(std::move(args)); }

}  // namespace

TEST_CASE("flags win over the environment", "[cli]") {
  ::setenv("AXON_CPU_DEVICE_COUNT", "3", 1);
  ::setenv("AXON_PLUGIN_PATH", "/env1:/env2", 1);
  ::setenv("AXON_VISIBLE_DEVICES", "cpu:2", 1);
  axon::Config c = axon::cli::make_config(parse({"--cpu-devices", "2", "--plugin-dir", "/flag1", "--plugin-dir",
                                                 "/flag2", "--visible-devices", "cpu:1", "--strict-placement",
                                                 "--gpu-memory-limit", "256", "--log-level", "error"}));
  ::unsetenv("AXON_CPU_DEVICE_COUNT");
  ::unsetenv("AXON_PLUGIN_PATH");
  ::unsetenv("AXON_VISIBLE_DEVICES");
  CHECK(c.cpu_devices == 2);
  CHECK(c.plugin_dirs == std::vector<std::string>{"/flag1", "/flag2", "/env1", "/env2"});
  CHECK(c.visible_devices == "cpu:1");
  CHECK(c.visible_devices_source == "--visible-devices");
  CHECK(c.strict_placement);
  CHECK(c.gpu_memory_limit_mb == 256);
  CHECK(c.log_level == "error");
  CHECK_FALSE(c.log_device_placement);
}

TEST_CASE("out-of-range flag values are usage errors", "[cli]") {
  CHECK_THROWS_AS(axon::cli::make_config(parse({"--cpu-devices", "0"})), axon::UsageError);
  CHECK_THROWS_AS(axon::cli::make_config(parse({"--threads", "-2"})), axon::UsageError);
  CHECK_THROWS_AS(axon::cli::make_config(parse({"--gpu-memory-limit", "0"})), axon::UsageError);
  CHECK_THROWS_WITH(axon::cli::make_config(parse({"--log-level", "chatty"})), Contains("--log-level"));
  CHECK_THROWS_AS(parse({"--cpu-devices", "two"}), po::error);
}

TEST_CASE("run_main maps failures to exit codes", "[cli]") {
  CHECK(axon::cli::run_main("t", [] { return 0; }) == 0);
  CHECK(axon::cli::run_main("t", [] { return 3; }) == 3);
  CHECK(axon::cli::run_main("t", []() -> int { throw axon::UsageError("bad"); }) == 2);
  CHECK(axon::cli::run_main("t", []() -> int { throw po::unknown_option("--nope"); }) == 2);
  CHECK(axon::cli::run_main("t", []() -> int { throw axon::RuntimeError("broke"); }) == 1);
  CHECK(axon::cli::run_main("t", []() -> int { throw std::logic_error("odd"); }) == 1);
}
