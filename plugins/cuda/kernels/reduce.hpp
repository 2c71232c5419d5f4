// Host-side launchers for ABI 1.9's reductions over axes (reduce.cu). x's
// axes come merged into runs of kept and reduced ones (reduce.cpp), so a
// reduction is "outputs x inner" over strided runs. Small inner counts: one
// thread per output; else one block per output whose threads fold strided
// shares in double and combine them in a fixed tree: the same bits every run.
#pragma once

#include <axon/plugin_abi.h>

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

enum class Reduction { sum, mean, max };

struct ReduceRuns {
  int kept = 0, reduced = 0;
  int64_t kept_size[AXON_MAX_RANK], kept_stride[AXON_MAX_RANK];
  int64_t reduced_size[AXON_MAX_RANK], reduced_stride[AXON_MAX_RANK];
  int64_t outputs = 1, inner = 1;
};

void reduce(cudaStream_t s, Reduction r, const ReduceRuns& runs, const float* x, float* y);

}  // namespace axon::cuda::launch
