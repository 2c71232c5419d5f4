// Config::from_environment and lookup: every variable, and bad values as
// usage errors that name the variable.
#include <axon/config.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>

using axon::Config;
using Catch::Matchers::Contains;

namespace {

const char* const kVars[] = {"AXON_PLUGIN_PATH",        "AXON_VISIBLE_DEVICES",  "AXON_CPU_DEVICE_COUNT",
                             "AXON_NUM_THREADS",        "AXON_LOG_DEVICE_PLACEMENT", "AXON_STRICT_PLACEMENT",
                             "AXON_GPU_MEMORY_GROWTH",  "AXON_GPU_MEMORY_LIMIT_MB", "AXON_ALLOW_TF32",
                             "AXON_LOG_LEVEL"};

// Clears the AXON_* variables for the test and afterwards.
struct CleanEnv {
  CleanEnv() { clear(); }
  ~CleanEnv() { clear(); }
  static void clear() {
    for (const char* v : kVars) ::unsetenv(v);
  }
};

}  // namespace

TEST_CASE("defaults with no AXON_* variables", "[config]") {
  CleanEnv env;
  Config c = Config::from_environment();
  CHECK(c.plugin_dirs.empty());
  CHECK_FALSE(c.visible_devices);
  CHECK(c.cpu_devices == 1);
  CHECK(c.threads == 0);
  CHECK_FALSE(c.log_device_placement);
  CHECK_FALSE(c.strict_placement);
  CHECK_FALSE(c.gpu_memory_growth);
  CHECK_FALSE(c.gpu_memory_limit_mb);
  CHECK(c.log_level == "warning");
  CHECK(c.lookup("cpu-devices") == "1");
  CHECK(c.lookup("gpu-memory-limit") == std::nullopt);
  CHECK(c.lookup("no-such-key") == std::nullopt);
}

TEST_CASE("every AXON_* variable is read", "[config]") {
  CleanEnv env;
  ::setenv("AXON_PLUGIN_PATH", "/a:/b::/c", 1);
  ::setenv("AXON_VISIBLE_DEVICES", "gpu:1,cpu:0", 1);
  ::setenv("AXON_CPU_DEVICE_COUNT", "2", 1);
  ::setenv("AXON_NUM_THREADS", "3", 1);
  ::setenv("AXON_LOG_DEVICE_PLACEMENT", "1", 1);
  ::setenv("AXON_STRICT_PLACEMENT", "true", 1);
  ::setenv("AXON_GPU_MEMORY_GROWTH", "yes", 1);
  ::setenv("AXON_GPU_MEMORY_LIMIT_MB", "512", 1);
  ::setenv("AXON_ALLOW_TF32", "0", 1);
  ::setenv("AXON_LOG_LEVEL", "debug", 1);
  Config c = Config::from_environment();
  CHECK(c.plugin_dirs == std::vector<std::string>{"/a", "/b", "/c"});
  CHECK(c.visible_devices == "gpu:1,cpu:0");
  CHECK(c.visible_devices_source == "AXON_VISIBLE_DEVICES");
  CHECK(c.cpu_devices == 2);
  CHECK(c.threads == 3);
  CHECK(c.log_device_placement);
  CHECK(c.strict_placement);
  CHECK(c.gpu_memory_growth);
  CHECK(c.gpu_memory_limit_mb == 512);
  CHECK_FALSE(c.allow_tf32);
  CHECK(c.log_level == "debug");
  // What plugins see through get_config.
  CHECK(c.lookup("cpu-devices") == "2");
  CHECK(c.lookup("threads") == "3");
  CHECK(c.lookup("gpu-memory-growth") == "1");
  CHECK(c.lookup("gpu-memory-limit") == "512");
  CHECK(c.lookup("allow-tf32") == "0");
}

TEST_CASE("malformed AXON_* values are usage errors naming variable and value", "[config]") {
  struct Bad {
    const char* var;
    const char* value;
  };
  for (Bad b : {Bad{"AXON_CPU_DEVICE_COUNT", "0"}, Bad{"AXON_CPU_DEVICE_COUNT", "two"},
                Bad{"AXON_NUM_THREADS", "-1"}, Bad{"AXON_NUM_THREADS", "4x"}, Bad{"AXON_GPU_MEMORY_LIMIT_MB", "0"},
                Bad{"AXON_STRICT_PLACEMENT", "maybe"}, Bad{"AXON_LOG_LEVEL", "loud"}}) {
    CleanEnv env;
    INFO(b.var << "=" << b.value);
    ::setenv(b.var, b.value, 1);
    CHECK_THROWS_AS(Config::from_environment(), axon::UsageError);
    CHECK_THROWS_WITH(Config::from_environment(), Contains(b.var) && Contains(b.value));
  }
}

TEST_CASE("log levels parse and filter", "[config]") {
  using axon::log::Level;
  CHECK(axon::log::parse_level("DEBUG") == Level::debug);
  CHECK(axon::log::parse_level("warn") == Level::warning);
  CHECK_THROWS_AS(axon::log::parse_level("verbose"), axon::UsageError);
  Level saved = axon::log::level();
  axon::log::set_level(Level::error);
  CHECK_FALSE(axon::log::enabled(Level::warning));
  CHECK(axon::log::enabled(Level::error));
  axon::log::set_level(saved);
}
