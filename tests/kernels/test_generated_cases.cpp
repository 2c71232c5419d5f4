// axon-plugin-check's case generator run as a test too (one generator, as
// ggml's test-backend-ops is both test and tool): every case of every op the
// CPU plugin has a kernel for, judged against the reference kernels with the
// checker's tolerances; the suite runs again with each lower instruction set
// forced (tests/kernels/CMakeLists.txt), which the tool alone never does.
#include "kernel_checks.hpp"
#include "kernel_test_util.hpp"

#include <axon/op_table.hpp>
#include <axon/tolerance.hpp>

#include <string>

using namespace axon;
using axon::test::cpu;

TEST_CASE("axon-plugin-check's generated cases pass on the CPU plugin", "[generated]") {
  const axon_device_api& api = cpu().api;
  int checked_ops = 0;
  for (const OpSchema& op : kOpTable) {
    plugin_check::Report report(true);  // collected, not printed
    plugin_check::check_kernels(api, op.name, tol::kSumUlps, report);
    std::string failures;
    for (const plugin_check::Check& c : report.checks())
      if (c.status == plugin_check::Status::fail) failures += c.name + ": " + c.detail + "\n";
    INFO(failures);
    CHECK(report.count(plugin_check::Status::fail) == 0);
    bool has_kernel = false;
    for (int t = 0; t < kDtypeCount; ++t)
      has_kernel = has_kernel || api.get_kernel(api.device_ctx, op.name, static_cast<axon_dtype>(t)) != nullptr;
    if (has_kernel) {
      CHECK(report.count(plugin_check::Status::pass) > 0);
      ++checked_ops;
    }
  }
  CHECK(checked_ops > 60);
}
