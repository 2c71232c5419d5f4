// The bounds axon's own tests judge a backend by (tests/common/tolerance.hpp,
// docs/testing.md states them and their power), for the checker's comparisons
// with the reference kernels:
//   sums of products:  |got - want| <= ulps * u * S + u * |want|, S the sum of
//                      the magnitudes summed into the element (16 by default);
//   loss and Adam:     |got - want| <= 8 * u * B, B the magnitude of what the
//                      result is made of;
//   everything else:   equal (floats as floats, other dtypes bit for bit).
#pragma once

#include <cmath>

namespace axon::plugin_check::tol {

constexpr double kUnit = 0x1p-24;  // float32's unit roundoff
constexpr double kSumUlps = 16;
constexpr double kOpsUlps = 8;

inline double sum_allowed(double want, double abs_sum, double ulps) {
  return ulps * kUnit * abs_sum + kUnit * std::fabs(want) + 1e-30;
}
inline double ops_allowed(double magnitude) { return kOpsUlps * kUnit * magnitude + 1e-30; }

}  // namespace axon::plugin_check::tol
