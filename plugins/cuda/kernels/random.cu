// ABI 1.9's stateless random ops on the GPU (plugin_abi.h gives the recipe):
// one thread per Philox block (axon/philox.hpp), writing its four elements.
// The normal's logf, sincosf of TensorFlow's BoxMullerFloat are computed in
// double and rounded (glibc's float functions, which TensorFlow's CPU kernel
// calls, are within an ulp of that); the rest rounds as TensorFlow does
// (compiled without FMA contraction).
#include "random.hpp"
#include "check_launch.cuh"

#include <axon/philox.hpp>

namespace axon::cuda::launch {
namespace {

constexpr int kThreads = 256;
constexpr double kPi = 3.14159265358979323846;

__device__ void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = philox::uint32_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = (float)(2.0 * kPi * (double)philox::uint32_to_float(x1));
  const float u2 = sqrtf(-2.0f * (float)log((double)u1));
  double s, c;
  sincos((double)v1, &s, &c);
  *f0 = (float)s * u2;
  *f1 = (float)c * u2;
}

template <bool Normal>
__global__ void random_kernel(RandomParams p, float* y, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (4 * i >= n) return;
  const philox::Block counter{{p.counter[0], p.counter[1], p.counter[2], p.counter[3]}};
  const philox::Block b = philox::generate(philox::advance(counter, (uint64_t)i), philox::Key{{p.key[0], p.key[1]}});
  float v[4];
  if (Normal) {
    box_muller(b.w[0], b.w[1], &v[0], &v[1]);
    box_muller(b.w[2], b.w[3], &v[2], &v[3]);
  } else {
    for (int j = 0; j < 4; ++j) v[j] = philox::uint32_to_float(b.w[j]);
  }
  for (int j = 0; j < 4 && 4 * i + j < n; ++j) y[4 * i + j] = __fadd_rn(__fmul_rn(v[j], p.scale), p.offset);
}

template <bool Normal>
void launch_random(cudaStream_t s, const RandomParams& p, float* y, int64_t n, const char* what) {
  if (n == 0) return;
  const int64_t blocks = (n + 3) / 4;
  random_kernel<Normal><<<(unsigned)((blocks + kThreads - 1) / kThreads), kThreads, 0, s>>>(p, y, n);
  check_launch(what);
}

}  // namespace

void stateless_normal(cudaStream_t s, const RandomParams& p, float* y, int64_t n) {
  launch_random<true>(s, p, y, n, "stateless_normal");
}
void stateless_uniform(cudaStream_t s, const RandomParams& p, float* y, int64_t n) {
  launch_random<false>(s, p, y, n, "stateless_uniform");
}

}  // namespace axon::cuda::launch
