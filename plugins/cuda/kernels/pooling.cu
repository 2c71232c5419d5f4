// axon's own pooling kernels (pooling.hpp).
#include "pooling.hpp"

#include <stdexcept>
#include <string>

namespace axon::cuda::launch {

namespace {

constexpr int kThreads = 256;

void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + " launch failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  return static_cast<unsigned>(b > 65535 * 32 ? 65535 * 32 : b);  // grid-stride loops cover the rest
}

// Pass 1, per output element: the tap of its window's first maximum.
__global__ void max_pool_argmax_kernel(PoolShape p, const float* x, int32_t* tap, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
    tap[i] = max_pool_first_max_tap(p, x, i);
}

// Pass 2, per input element: the dy of the windows whose first maximum it is.
__global__ void max_pool_gather_kernel(PoolShape p, const int32_t* tap, const float* dy, float* dx, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
    dx[i] = max_pool_grad_at(p, tap, dy, i);
}

__global__ void avg_pool_kernel(PoolShape p, const float* x, float* y, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = avg_pool_at(p, x, i);
}

__global__ void avg_pool_grad_kernel(PoolShape p, const float* dy, float* dx, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x)
    dx[i] = avg_pool_grad_at(p, dy, i);
}

}  // namespace

void avg_pool(cudaStream_t s, const PoolShape& p, const float* x, float* y) {
  const int64_t outputs = p.n * p.oh * p.ow * p.c;
  if (outputs == 0) return;
  avg_pool_kernel<<<blocks_for(outputs), kThreads, 0, s>>>(p, x, y, outputs);
  check_launch("avg_pool");
}

void avg_pool_grad(cudaStream_t s, const PoolShape& p, const float* dy, float* dx) {
  const int64_t inputs = p.n * p.h * p.w * p.c;
  if (inputs == 0) return;
  avg_pool_grad_kernel<<<blocks_for(inputs), kThreads, 0, s>>>(p, dy, dx, inputs);
  check_launch("avg_pool_grad");
}

int64_t max_pool_grad_scratch(const PoolShape& p) { return p.n * p.oh * p.ow * p.c; }

void max_pool_grad(cudaStream_t s, const PoolShape& p, const float* x, const float* dy, float* dx, int32_t* scratch) {
  const int64_t outputs = max_pool_grad_scratch(p), inputs = p.n * p.h * p.w * p.c;
  if (inputs == 0) return;
  if (outputs > 0) {
    max_pool_argmax_kernel<<<blocks_for(outputs), kThreads, 0, s>>>(p, x, scratch, outputs);
    check_launch("max_pool_grad");
  }
  max_pool_gather_kernel<<<blocks_for(inputs), kThreads, 0, s>>>(p, scratch, dy, dx, inputs);
  check_launch("max_pool_grad");
}

}  // namespace axon::cuda::launch
