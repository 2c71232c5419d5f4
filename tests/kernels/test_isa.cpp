// The kernel tests run three times (CMakeLists.txt): with the best
// instruction set the CPU has, and with AXON_CPU_ISA=avx2 and =base. Each run
// checks here that the CPU plugin really switched: its device description
// names the instruction set its SIMD loops use.
#include "kernel_test_util.hpp"

#include <cstdlib>
#include <cstring>

using namespace axon::test;

namespace {

// The best level this CPU supports, found here independently of the plugin.
std::string best_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
    return "avx512";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "avx2";
#endif
  return "base";
}

}  // namespace

TEST_CASE("the CPU plugin's SIMD loops use the instruction set this run asks for", "[isa][cpu]") {
  const char* asked = std::getenv("AXON_CPU_ISA");
  const std::string best = best_isa();
  std::string want = best;
  if (asked != nullptr && std::strcmp(asked, "base") == 0) want = "base";
  if (asked != nullptr && std::strcmp(asked, "avx2") == 0 && best == "avx512") want = "avx2";
  axon_device_props p{};
  p.struct_size = sizeof p;
  axon_error err{};
  auto& api = cpu_plugin().api;
  REQUIRE(api.get_device_props(api.plugin_ctx, 0, &p, &err) == AXON_OK);
  INFO("AXON_CPU_ISA=" << (asked ? asked : "(unset)") << ", CPU best " << best << ", description: " << p.description);
  CHECK(std::string(p.description).find("simd=" + want + ",") != std::string::npos);
}
