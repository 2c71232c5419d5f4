// The `deterministic` setting the CUDA plugin reads through get_config: from
// --deterministic or AXON_DETERMINISTIC (checked like the other booleans), to
// Config::lookup("deterministic") as "1"/"0".
#include "device_flags.hpp"

#include <axon/cli.hpp>
#include <axon/config.hpp>
#include <axon/error.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <vector>

using Catch::Matchers::Contains;

namespace {

axon::Config from_flags(std::vector<const char*> args) { return axon::test::config_from_device_flags(std::move(args)); }

struct CleanDeterministic {
  CleanDeterministic() { ::unsetenv("AXON_DETERMINISTIC"); }
  ~CleanDeterministic() { ::unsetenv("AXON_DETERMINISTIC"); }
};

}  // namespace

TEST_CASE("deterministic is off by default", "[cuda][config]") {
  CleanDeterministic env;
  const axon::Config c = axon::Config::from_environment();
  CHECK_FALSE(c.deterministic);
  CHECK(c.lookup("deterministic") == "0");
}

TEST_CASE("AXON_DETERMINISTIC and --deterministic turn it on", "[cuda][config]") {
  CleanDeterministic env;
  CHECK(from_flags({"--deterministic"}).lookup("deterministic") == "1");
  ::setenv("AXON_DETERMINISTIC", "yes", 1);
  CHECK(axon::Config::from_environment().lookup("deterministic") == "1");
  CHECK(from_flags({}).deterministic);
  ::setenv("AXON_DETERMINISTIC", "0", 1);
  CHECK(axon::Config::from_environment().lookup("deterministic") == "0");
  CHECK(from_flags({"--deterministic"}).deterministic);  // the flag wins
}

TEST_CASE("a malformed AXON_DETERMINISTIC is a usage error naming it", "[cuda][config]") {
  CleanDeterministic env;
  ::setenv("AXON_DETERMINISTIC", "sometimes", 1);
  CHECK_THROWS_WITH(axon::Config::from_environment(), Contains("AXON_DETERMINISTIC='sometimes'"));
}
