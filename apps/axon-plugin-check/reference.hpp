// The oracle: the reference plugin's kernels (sdk/examples/reference-plugin,
// compiled into the checker through ref::kernel_table() alone), run on host
// memory.
#pragma once

#include "cases.hpp"

namespace axon::plugin_check {

// Runs `op` on copies of `inputs`, writing `outputs` (shapes and dtypes as
// given; with in_place, output 0 is input 0's buffer). Returns what the op
// wrote: its outputs, or the inputs it updates in place. Throws
// std::runtime_error with the reference's message if it refuses the call.
std::vector<HostTensor> run_reference(const OpSchema& op, std::vector<HostTensor> inputs,
                                      std::vector<HostTensor> outputs, const void* attrs, bool in_place = false);

// The case's results on the reference, and S (the same op on the inputs
// marked abs_inputs taken by magnitude) when a result is judged as a sum.
struct Expected {
  std::vector<HostTensor> want;
  std::vector<HostTensor> abs_sum;  // empty when no result is a sum
};
Expected expected_results(const Case& c);

}  // namespace axon::plugin_check
