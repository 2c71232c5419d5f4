// Host-side launchers for ABI 1.9's stateless random ops (random.cu): one
// thread per Philox block of four elements, each from its index alone.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

// key, counter, scale and offset as axon_random_attrs has them.
struct RandomParams {
  uint32_t key[2];
  uint32_t counter[4];
  float scale, offset;
};

void stateless_normal(cudaStream_t s, const RandomParams& p, float* y, int64_t n);
void stateless_uniform(cudaStream_t s, const RandomParams& p, float* y, int64_t n);

}  // namespace axon::cuda::launch
