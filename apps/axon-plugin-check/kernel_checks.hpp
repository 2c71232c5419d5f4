// The numerical checks: every case (cases.hpp) of every (op, dtype) the
// device has a kernel for, against the reference kernels; an (op, dtype)
// without a kernel is skipped, saying what axon does instead.
#pragma once

#include "report.hpp"

#include <axon/plugin_abi.h>

#include <string>

namespace axon::plugin_check {

// only_op: one op's checks ("" for all). sum_ulps: the bound on sums of
// products in units of u * S (axon/tolerance.hpp).
void check_kernels(const axon_device_api& api, const std::string& only_op, double sum_ulps, Report& report);

}  // namespace axon::plugin_check
