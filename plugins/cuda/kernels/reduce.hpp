// Host-side launchers for ABI 1.9's reductions over axes (reduce.cu). x's
// axes come merged into runs of kept and reduced ones (axon/reduce_runs.hpp), so a
// reduction is "outputs x inner" over strided runs. Small inner counts: one
// thread per output; else one block per output whose threads fold strided
// shares in double and combine them in a fixed tree: the same bits every run.
#pragma once

#include <axon/reduce_runs.hpp>

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

enum class Reduction { sum, mean, max };

using axon::ReduceRuns;

void reduce(cudaStream_t s, Reduction r, const ReduceRuns& runs, const float* x, float* y);

}  // namespace axon::cuda::launch
