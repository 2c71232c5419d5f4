// What docs/cli.md promises about settings: boolean variables accept 1/0,
// true/false, yes/no, on/off in any case; an empty variable counts as unset;
// AXON_ALLOW_TF32 and --allow-tf32 reach the plugins as "allow-tf32" = "1".
#include "device_flags.hpp"

#include <axon/cli.hpp>
#include <axon/config.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>


namespace {

const char* const kVariables[] = {"AXON_PLUGIN_PATH",         "AXON_VISIBLE_DEVICES",   "AXON_CPU_DEVICE_COUNT",
                                  "AXON_NUM_THREADS",         "AXON_LOG_DEVICE_PLACEMENT", "AXON_STRICT_PLACEMENT",
                                  "AXON_GPU_MEMORY_GROWTH",   "AXON_GPU_MEMORY_LIMIT_MB", "AXON_ALLOW_TF32",
                                  "AXON_DETERMINISTIC",       "AXON_LOG_LEVEL"};

// Clears the variables above for the test and afterwards.
struct CleanEnv {
  CleanEnv() { clear(); }
  ~CleanEnv() { clear(); }
  static void clear() {
    for (const char* v : kVariables) ::unsetenv(v);
  }
};

// Each boolean variable and the key plugins read it under.
const std::pair<const char*, const char*> kBooleans[] = {
    {"AXON_LOG_DEVICE_PLACEMENT", "log-device-placement"}, {"AXON_STRICT_PLACEMENT", "strict-placement"},
    {"AXON_GPU_MEMORY_GROWTH", "gpu-memory-growth"},       {"AXON_ALLOW_TF32", "allow-tf32"},
    {"AXON_DETERMINISTIC", "deterministic"}};

axon::Config from_flags(std::vector<const char*> args) { return axon::test::config_from_device_flags(std::move(args)); }

}  // namespace

TEST_CASE("boolean variables accept 1/0, true/false, yes/no, on/off in any case", "[settings]") {
  const std::pair<const char*, const char*> spellings[] = {
      {"1", "1"},    {"0", "0"},   {"true", "1"}, {"FALSE", "0"}, {"Yes", "1"},
      {"no", "0"},   {"ON", "1"},  {"Off", "0"},  {"TrUe", "1"},  {"nO", "0"}};
  for (const auto& [var, key] : kBooleans)
    for (const auto& [text, want] : spellings) {
      CleanEnv env;
      INFO(var << "=" << text);
      ::setenv(var, text, 1);
      CHECK(axon::Config::from_environment().lookup(key) == std::string(want));
    }
}

TEST_CASE("an empty variable counts as unset", "[settings]") {
  CleanEnv env;
  const axon::Config defaults = axon::Config::from_environment();
  for (const char* var : kVariables) {
    CleanEnv clean;
    INFO(var << "=''");
    ::setenv(var, "", 1);
    axon::Config c;
    REQUIRE_NOTHROW(c = axon::Config::from_environment());
    CHECK(c.plugin_dirs == defaults.plugin_dirs);
    CHECK(c.visible_devices == defaults.visible_devices);
    for (const char* key : {"cpu-devices", "threads", "log-device-placement", "strict-placement", "gpu-memory-growth",
                            "gpu-memory-limit", "allow-tf32", "deterministic", "log-level"})
      CHECK(c.lookup(key) == defaults.lookup(key));
  }
}

TEST_CASE("AXON_ALLOW_TF32 and --allow-tf32 reach the plugins as allow-tf32", "[settings]") {
  CleanEnv env;
  CHECK(axon::Config::from_environment().lookup("allow-tf32") == "0");  // off by default
  ::setenv("AXON_ALLOW_TF32", "1", 1);
  CHECK(axon::Config::from_environment().allow_tf32);
  CHECK(axon::Config::from_environment().lookup("allow-tf32") == "1");
  ::setenv("AXON_ALLOW_TF32", "0", 1);
  CHECK(axon::Config::from_environment().lookup("allow-tf32") == "0");
  CHECK(from_flags({"--allow-tf32"}).lookup("allow-tf32") == "1");  // the flag wins over the variable
  ::unsetenv("AXON_ALLOW_TF32");
  CHECK(from_flags({}).lookup("allow-tf32") == "0");
  CHECK(from_flags({"--allow-tf32"}).lookup("allow-tf32") == "1");
}
