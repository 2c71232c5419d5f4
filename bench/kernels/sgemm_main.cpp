// axon-bench-sgemm [N ...]: prints the machine's large-sgemm rate with all
// CPUs as `sgemm_gflops <rate>` (the best over the sizes, default 2048 and
// 4096), one `sgemm_gflops_<N> <rate>` line per size before it, and the
// one-thread rate as `sgemm_gflops_1thread <rate>`.
#include "sgemm_rate.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    long n = std::strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || n < 16 || n > 16384) {
      std::fprintf(stderr, "axon-bench-sgemm: size must be an integer in [16, 16384], got '%s'\n", argv[i]);
      return 2;
    }
    sizes.push_back(static_cast<int>(n));
  }
  if (sizes.empty()) sizes = {2048, 4096};
  if (!axon::cpu::openblas().ok()) {
    std::fprintf(stderr, "axon-bench-sgemm: %s\n", axon::cpu::openblas().error.c_str());
    return 1;
  }
  double best = 0;
  for (int n : sizes) {
    double r = axon::bench::sgemm_gflops(n);
    std::printf("sgemm_gflops_%d %.1f\n", n, r);
    best = std::max(best, r);
  }
  std::printf("sgemm_gflops_1thread %.1f\n", axon::bench::sgemm_gflops(sizes.front(), 1));
  std::printf("threads %d\n", axon::bench::sgemm_all_cpus());
  std::printf("library %s\n", axon::bench::sgemm_library().c_str());
  std::printf("sgemm_gflops %.1f\n", best);
  return 0;
}
