#include "kernel_checks.hpp"

#include "cases.hpp"
#include "device_calls.hpp"
#include "judge.hpp"
#include "reference.hpp"

namespace axon::plugin_check {
namespace {

void check_case(const axon_device_api& api, axon_kernel_fn fn, const Case& c, double sum_ulps, Report& report) {
  Expected want;
  try {
    want = expected_results(c);
  } catch (const std::exception& e) {
    return report.fail(c.name(), std::string("the checker's case is wrong: ") + e.what());
  }
  // A device may decline a call's shapes: axon then runs it on the CPU.
  std::vector<axon_tensor> in, out;
  for (const HostTensor& t : c.inputs) in.push_back(t.view(nullptr));
  for (const HostTensor& t : c.outputs) out.push_back(t.view(nullptr));
  if (!client::supports(api, client::kernel_call(c.op->name, in, out, c.attr_ptr())))
    return report.skip(c.name(), "declined by supports(): axon runs this call on the CPU device");
  std::vector<HostTensor> got;
  try {
    got = run_on_device(api, fn, c);
  } catch (const CallFailed& e) {
    if (e.status() == AXON_UNIMPLEMENTED)
      return report.skip(c.name(), std::string("declined when run (") + e.what() + "): axon runs it on the CPU device");
    return report.fail(c.name(), e.what());
  }
  std::string problems;
  for (int k = 0; k < c.result_count(); ++k) {
    const size_t i = static_cast<size_t>(k);
    const HostTensor* s = i < want.abs_sum.size() ? &want.abs_sum[i] : nullptr;
    const Verdict v = judge(c, k, got[i], want.want[i], s, sum_ulps);
    if (!v.ok) problems += (problems.empty() ? "" : "; ") + v.detail;
  }
  if (problems.empty())
    report.pass(c.name());
  else
    report.fail(c.name(), problems);
}

}  // namespace

void check_kernels(const axon_device_api& api, const std::string& only_op, double sum_ulps, Report& report) {
  for (const OpSchema& op : kOpTable) {
    if (!only_op.empty() && only_op != op.name) continue;
    for (int t = 0; t < kDtypeCount; ++t) {
      const auto key = static_cast<axon_dtype>(t);
      if (!kernel_dtype_allowed(op, key)) continue;
      axon_kernel_fn fn = api.get_kernel(api.device_ctx, op.name, key);
      if (fn == nullptr) {
        report.skip(kernel_name(op, key),
                    op_is_optional(op) ? "no kernel (optional: axon runs " + parts_string(op) + " instead)"
                                       : std::string("no kernel (axon runs the op on the CPU device instead)"));
        continue;
      }
      for (const Case& c : make_cases(op, key)) check_case(api, fn, c, sum_ulps, report);
    }
  }
}

}  // namespace axon::plugin_check
