// Helpers of the reliability tests: the training tests' temporary folders,
// file writers and usage-error catcher, plus this process's peak memory.
#pragma once

#include "train_test_util.hpp"

#include <sys/resource.h>

#include <cstdint>

namespace axon::test {

// Peak resident memory of this process so far, in MiB.
inline double peak_rss_mib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace axon::test
