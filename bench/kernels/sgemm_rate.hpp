// The machine's large-sgemm rate, measured with OpenBLAS directly: the yard-
// stick the epoch and kernel benchmarks report their ratios against.
// Header-only so any benchmark can call it (link the target axon_bench_sgemm).
// OpenBLAS is loaded the way the CPU plugin loads it (plugins/cpu/openblas.hpp),
// so the yardstick uses the same kernels as the plugin.
#pragma once

#include <openblas.hpp>
#include <sched.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace axon::bench {

// CPUs this process may run on.
inline int sgemm_all_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1u, std::thread::hardware_concurrency());
}

// GFLOP/s of C = A*B for n x n row-major float matrices with `threads` OpenBLAS
// threads (0 = every CPU), best of the calls made in about `seconds`
// (at least two, after one warm-up). Restores OpenBLAS's thread setting.
inline double sgemm_gflops(int n, int threads = 0, double seconds = 1.0) {
  const axon::cpu::OpenBlas& blas = axon::cpu::openblas();
  if (!blas.ok()) {
    std::fprintf(stderr, "sgemm_gflops: %s\n", blas.error.c_str());
    return 0.0;
  }
  const int before = blas.get_num_threads();
  blas.set_num_threads(threads > 0 ? threads : sgemm_all_cpus());
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(nn), b(nn), c(nn);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < nn; ++i) a[i] = u(rng), b[i] = u(rng);
  auto call = [&] {
    blas.sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  };
  call();  // warm-up: page faults, thread start-up
  using clock = std::chrono::steady_clock;
  double best = 1e30, total = 0;
  for (int reps = 0; reps < 2 || total < seconds; ++reps) {
    auto t0 = clock::now();
    call();
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  blas.set_num_threads(before);
  return 2.0 * double(n) * double(n) * double(n) / best / 1e9;
}

// What OpenBLAS runs as: its config string and the OPENBLAS_CORETYPE note.
inline std::string sgemm_library() {
  const axon::cpu::OpenBlas& blas = axon::cpu::openblas();
  if (!blas.ok()) return blas.error;
  return std::string(blas.get_config()) + (blas.coretype.empty() ? "" : ", " + blas.coretype);
}

}  // namespace axon::bench
