// ABI 1.9's reductions (ReduceSum, Mean, Max) on the GPU: sums in double,
// Max propagating NaN, over no element TensorFlow's 0, NaN and -inf.
#include "reduce.hpp"
#include "check_launch.cuh"

namespace axon::cuda::launch {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kThreadPerOutput = 64;  // inner counts up to this: one thread per output

__device__ double initial(Reduction r) { return r == Reduction::max ? -INFINITY : 0.0; }

__device__ double fold(Reduction r, double acc, double v) {
  if (r != Reduction::max) return acc + v;
  if (isnan(acc)) return acc;
  return (v > acc || isnan(v)) ? v : acc;
}

__device__ int64_t output_base(const ReduceRuns& p, int64_t o) {
  int64_t base = 0;
  for (int g = p.kept - 1; g >= 0; --g) {
    base += (o % p.kept_size[g]) * p.kept_stride[g];
    o /= p.kept_size[g];
  }
  return base;
}

__device__ int64_t inner_offset(const ReduceRuns& p, int64_t j) {
  int64_t off = 0;
  for (int g = p.reduced - 1; g >= 0; --g) {
    off += (j % p.reduced_size[g]) * p.reduced_stride[g];
    j /= p.reduced_size[g];
  }
  return off;
}

__device__ float finish(Reduction r, double acc, int64_t count) {
  return (float)(r == Reduction::mean ? acc / (double)count : acc);
}

__global__ void reduce_per_thread(Reduction r, ReduceRuns p, const float* x, float* y) {
  const int64_t o = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (o >= p.outputs) return;
  const int64_t base = output_base(p, o);
  double acc = initial(r);
  for (int64_t j = 0; j < p.inner; ++j) acc = fold(r, acc, x[base + inner_offset(p, j)]);
  y[o] = finish(r, acc, p.inner);
}

__global__ void reduce_per_block(Reduction r, ReduceRuns p, const float* x, float* y) {
  __shared__ double part[kThreads];
  const int64_t o = blockIdx.x;
  const int64_t base = output_base(p, o);
  double acc = initial(r);
  for (int64_t j = threadIdx.x; j < p.inner; j += kThreads) acc = fold(r, acc, x[base + inner_offset(p, j)]);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] = fold(r, part[threadIdx.x], part[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) y[o] = finish(r, part[0], p.inner);
}

}  // namespace

void reduce(cudaStream_t s, Reduction r, const ReduceRuns& runs, const float* x, float* y) {
  if (runs.outputs == 0) return;
  if (runs.inner <= kThreadPerOutput)
    reduce_per_thread<<<(unsigned)((runs.outputs + kThreads - 1) / kThreads), kThreads, 0, s>>>(r, runs, x, y);
  else
    reduce_per_block<<<(unsigned)runs.outputs, kThreads, 0, s>>>(r, runs, x, y);
  check_launch("reduce");
}

}  // namespace axon::cuda::launch
