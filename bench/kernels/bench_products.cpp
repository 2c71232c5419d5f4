// The CPU plugin's register-blocked products (plugins/cpu/small_gemm.hpp),
// compiled in, on one thread at the Winograd layers' chunk shapes: per chunk
// 16 transform points, each y[rows, n] = a[rows, k] * b[k, n] (forward and
// input gradient) or out[k, n] += a^T * b' (filter gradient), with the rows a
// chunk of the ResNet's 28x28x16, 14x14x32 and 7x7x64 layers has (128, 64
// and 32 tiles). GFLOPS counts 2 k n per row and point; compare it with the
// cores' FMA peak rather than sgemm's rate: these products are what Winograd
// leaves of a convolution.
#include "small_gemm.hpp"

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace {

constexpr int kPoints = 16;

struct Chunk {
  std::vector<float> a, b, y;
  Chunk(int64_t rows, int64_t k, int64_t n, bool tn)
      : a(static_cast<size_t>(kPoints * rows * k)), b(static_cast<size_t>(kPoints * (tn ? rows : k) * n)),
        y(static_cast<size_t>(kPoints * (tn ? k : rows) * n)) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : a) v = u(rng);
    for (float& v : b) v = u(rng);
  }
};

void products(benchmark::State& state, bool tn) {
  const int64_t k = state.range(0), n = state.range(1), rows = state.range(2);
  Chunk c(rows, k, n, tn);
  for (auto _ : state) {
    for (int q = 0; q < kPoints; ++q) {
      const float* a = c.a.data() + q * rows * k;
      if (tn)
        axon::cpu::small_k_gemm_tn(a, rows, k, c.b.data() + q * rows * n, n, c.y.data() + q * k * n, true);
      else
        axon::cpu::small_k_gemm(a, rows, k, c.b.data() + q * k * n, n, c.y.data() + q * rows * n);
    }
    benchmark::DoNotOptimize(c.y.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(static_cast<double>(2 * kPoints * rows * k * n),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void shapes(benchmark::internal::Benchmark* b) {
  b->Args({16, 16, 128})->Args({32, 32, 64})->Args({64, 64, 32})->ArgNames({"k", "n", "rows"});
}

}  // namespace

BENCHMARK_CAPTURE(products, small_k_gemm, false)->Apply(shapes);
BENCHMARK_CAPTURE(products, small_k_gemm_tn, true)->Apply(shapes);
BENCHMARK_MAIN();
