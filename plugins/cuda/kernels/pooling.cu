// axon's own pooling kernels (pooling.hpp).
#include "pooling.hpp"
#include "check_launch.cuh"
#include "launch_geometry.hpp"

#include <algorithm>
#include <cstdint>

namespace axon::cuda::launch {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

// Pass 1, per output element: the tap of its window's first maximum.
template <class I>
__global__ void max_pool_argmax_kernel(PoolShapeT<I> p, const float* x, int32_t* tap, I total) {
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x)
    tap[i] = max_pool_first_max_tap(p, x, i);
}

// Pass 2, per input element: the dy of the windows whose first maximum it is.
template <class I>
__global__ void max_pool_gather_kernel(PoolShapeT<I> p, const int32_t* tap, const float* dy, float* dx, I total) {
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x)
    dx[i] = max_pool_grad_at(p, tap, dy, i);
}

template <class I>
__global__ void avg_pool_kernel(PoolShapeT<I> p, const float* x, float* y, I total) {
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x)
    y[i] = avg_pool_at(p, x, i);
}

template <class I>
__global__ void avg_pool_grad_kernel(PoolShapeT<I> p, const float* dy, float* dx, I total) {
  for (I i = blockIdx.x * (I)blockDim.x + threadIdx.x; i < total; i += (I)gridDim.x * blockDim.x)
    dx[i] = avg_pool_grad_at(p, dy, i);
}

// Whether every index of p's tensors, and a grid-stride loop's step past
// them, fits 32 bits.
bool fits_32_bits(const PoolShape& p) {
  const int64_t larger = std::max(p.n * p.h * p.w * p.c, p.n * p.oh * p.ow * p.c);
  return larger + int64_t{65535} * 32 * kThreads < INT32_MAX;
}

// f(shape) with the shape's indices 32-bit where they fit, else 64-bit.
template <class F>
void with_indices(const PoolShape& p, F f) {
  if (fits_32_bits(p)) return f(narrow(p));
  f(p);
}

}  // namespace

void avg_pool(cudaStream_t s, const PoolShape& p, const float* x, float* y) {
  const int64_t outputs = p.n * p.oh * p.ow * p.c;
  if (outputs == 0) return;
  with_indices(p, [&](auto q) {
    using I = decltype(q.n);
    avg_pool_kernel<I><<<blocks_for(outputs), kThreads, 0, s>>>(q, x, y, static_cast<I>(outputs));
  });
  check_launch("avg_pool");
}

void avg_pool_grad(cudaStream_t s, const PoolShape& p, const float* dy, float* dx) {
  const int64_t inputs = p.n * p.h * p.w * p.c;
  if (inputs == 0) return;
  with_indices(p, [&](auto q) {
    using I = decltype(q.n);
    avg_pool_grad_kernel<I><<<blocks_for(inputs), kThreads, 0, s>>>(q, dy, dx, static_cast<I>(inputs));
  });
  check_launch("avg_pool_grad");
}

int64_t max_pool_grad_scratch(const PoolShape& p) { return p.n * p.oh * p.ow * p.c; }

void max_pool_grad(cudaStream_t s, const PoolShape& p, const float* x, const float* dy, float* dx, int32_t* scratch) {
  const int64_t outputs = max_pool_grad_scratch(p), inputs = p.n * p.h * p.w * p.c;
  if (inputs == 0) return;
  with_indices(p, [&](auto q) {
    using I = decltype(q.n);
    if (outputs > 0) {
      max_pool_argmax_kernel<I><<<blocks_for(outputs), kThreads, 0, s>>>(q, x, scratch, static_cast<I>(outputs));
      check_launch("max_pool_grad");
    }
    max_pool_gather_kernel<I><<<blocks_for(inputs), kThreads, 0, s>>>(q, scratch, dy, dx, static_cast<I>(inputs));
  });
  check_launch("max_pool_grad");
}

}  // namespace axon::cuda::launch
