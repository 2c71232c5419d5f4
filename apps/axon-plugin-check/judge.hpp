// Judges a plugin's result against the reference's with axon's stated
// tolerances (axon/tolerance.hpp): which bound applies is the case's Rule.
#pragma once

#include "cases.hpp"

#include <string>

namespace axon::plugin_check {

struct Verdict {
  bool ok = true;
  std::string detail;  // on failure: how many elements, and the worst with got, want and the bound
};

// Result `index` of case `c`: `got` from the plugin, `want` from the
// reference, `abs_sum` (S) for Rule::sum. sum_ulps: the bound on sums in
// units of u * S.
Verdict judge(const Case& c, int index, const HostTensor& got, const HostTensor& want, const HostTensor* abs_sum,
              double sum_ulps);

// "[0,3,2,1]": the position of flat element `i` in a tensor of shape `dims`.
std::string position(const Dims& dims, int64_t i);

}  // namespace axon::plugin_check
