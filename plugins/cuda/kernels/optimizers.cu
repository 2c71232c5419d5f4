// Keras' optimizers of ABI 1.6 on the GPU: grid-stride elementwise updates,
// compiled without FMA contraction (CMakeLists.txt) so they round as the CPU
// plugin's and Keras' float32 operations do.
#include "optimizers.hpp"
#include "check_launch.cuh"
#include "launch_geometry.hpp"

#include <stdexcept>

namespace axon::cuda::launch {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

#define AXON_GRID_STRIDE(i, n) \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)gridDim.x * blockDim.x)

__global__ void sgd_kernel(SgdStep s, float* var, float* vel, const float* g, int64_t n) {
  AXON_GRID_STRIDE(i, n) {
    const float gi = g[i];
    if (s.momentum == 0.0f) {
      var[i] -= gi * s.lr;
      continue;
    }
    const float m = vel[i] * s.momentum - gi * s.lr;
    vel[i] = m;
    var[i] += s.nesterov ? m * s.momentum - gi * s.lr : m;
  }
}

__global__ void rmsprop_kernel(RmspropStep s, float* var, float* vel, float* mom, float* avg, const float* g,
                               int64_t n) {
  AXON_GRID_STRIDE(i, n) {
    const float gi = g[i];
    const float v = s.rho * vel[i] + s.one_minus_rho * (gi * gi);
    vel[i] = v;
    float denominator;
    if (s.centered) {
      const float av = s.rho * avg[i] + s.one_minus_rho * gi;
      avg[i] = av;
      denominator = v - av * av + s.eps;
    } else {
      denominator = v + s.eps;
    }
    const float increment = (s.lr * gi) / sqrtf(denominator);
    if (s.momentum > 0.0f) {
      const float m = s.momentum * mom[i] + increment;
      mom[i] = m;
      var[i] -= m;
    } else {
      var[i] -= increment;
    }
  }
}

__global__ void amsgrad_kernel(AmsgradStep s, float* var, float* m, float* v, float* vhat, const float* g, int64_t n) {
  AXON_GRID_STRIDE(i, n) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * s.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * s.one_minus_b2;
    const float hi = fmaxf(vhat[i], vi);
    m[i] = mi;
    v[i] = vi;
    vhat[i] = hi;
    var[i] -= (mi * s.alpha) / (sqrtf(hi) + s.eps);
  }
}

__global__ void adagrad_kernel(float lr, float eps, float* var, float* acc, const float* g, int64_t n) {
  AXON_GRID_STRIDE(i, n) {
    const float gi = g[i];
    const float ai = acc[i] + gi * gi;
    acc[i] = ai;
    var[i] -= (lr * gi) / sqrtf(ai + eps);
  }
}

__global__ void nadam_kernel(NadamStep s, float* var, float* m, float* v, const float* g, int64_t n) {
  AXON_GRID_STRIDE(i, n) {
    const float gi = g[i];
    const float mi = m[i] + (gi - m[i]) * s.one_minus_b1;
    const float vi = v[i] + (gi * gi - v[i]) * s.one_minus_b2;
    m[i] = mi;
    v[i] = vi;
    const float m_hat = (s.u_t1 * mi) / s.m_scale_t1 + (s.one_minus_u_t * gi) / s.m_scale_t;
    var[i] -= (m_hat * s.lr) / (sqrtf(vi / s.v_scale) + s.eps);
  }
}

__global__ void weight_decay_kernel(float wd, float lr, float* var, int64_t n) {
  AXON_GRID_STRIDE(i, n) { var[i] -= var[i] * wd * lr; }
}

__global__ void clip_value_kernel(float clip, float* g, int64_t n) {
  AXON_GRID_STRIDE(i, n) { g[i] = fminf(fmaxf(g[i], -clip), clip); }
}

// Segment blockIdx.y's [begin, end), clamped into [0, n].
__device__ void segment(const int64_t* ends, int64_t n, int64_t* begin, int64_t* end) {
  const int64_t s = blockIdx.y;
  int64_t b = s > 0 ? ends[s - 1] : 0;
  int64_t e = ends[s];
  b = b < 0 ? 0 : (b > n ? n : b);
  e = e < b ? b : (e > n ? n : e);
  *begin = b;
  *end = e;
}

// One block per segment: the sum of squares in double, a fixed tree, rounded to
// float.
__global__ void segment_squares_kernel(const float* g, int64_t n, const int64_t* ends, float* squares) {
  __shared__ double part[kThreads];
  int64_t b, e;
  segment(ends, n, &b, &e);
  double acc = 0.0;
  for (int64_t i = b + threadIdx.x; i < e; i += blockDim.x) acc += double(g[i]) * g[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) squares[blockIdx.y] = static_cast<float>(part[0]);
}

// clipnorm: g * clip / max(norm, clip) per segment; global: g * (clip * min(1 /
// norm, 1 / clip)).
__global__ void clip_scale_kernel(int global, float clip, float* g, int64_t n, const int64_t* ends, int64_t segments,
                                  const float* squares) {
  int64_t b, e;
  segment(ends, n, &b, &e);
  if (global) {
    float total = 0.0f;
    for (int64_t s = 0; s < segments; ++s) total += squares[s];
    const float norm = sqrtf(total);
    const float scale = clip * fminf(1.0f / norm, 1.0f / clip) + (norm - norm);
    for (int64_t i = b + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < e; i += (int64_t)gridDim.x * blockDim.x)
      g[i] *= scale;
    return;
  }
  const float divisor = fmaxf(sqrtf(squares[blockIdx.y]), clip);
  for (int64_t i = b + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < e; i += (int64_t)gridDim.x * blockDim.x)
    g[i] = (g[i] * clip) / divisor;
}

}  // namespace

void sgd(cudaStream_t s, const SgdStep& st, float* var, float* velocity, const float* g, int64_t n) {
  if (n == 0) return;
  sgd_kernel<<<blocks_for(n), kThreads, 0, s>>>(st, var, velocity, g, n);
  check_launch("sgd");
}

void rmsprop(cudaStream_t s, const RmspropStep& st, float* var, float* velocity, float* momentum, float* average_grad,
             const float* g, int64_t n) {
  if (n == 0) return;
  rmsprop_kernel<<<blocks_for(n), kThreads, 0, s>>>(st, var, velocity, momentum, average_grad, g, n);
  check_launch("rmsprop");
}

void adam_with_amsgrad(cudaStream_t s, const AmsgradStep& st, float* var, float* m, float* v, float* vhat,
                       const float* g, int64_t n) {
  if (n == 0) return;
  amsgrad_kernel<<<blocks_for(n), kThreads, 0, s>>>(st, var, m, v, vhat, g, n);
  check_launch("adam_with_amsgrad");
}

void adagrad(cudaStream_t s, float lr, float eps, float* var, float* accumulator, const float* g, int64_t n) {
  if (n == 0) return;
  adagrad_kernel<<<blocks_for(n), kThreads, 0, s>>>(lr, eps, var, accumulator, g, n);
  check_launch("adagrad");
}

void nadam(cudaStream_t s, const NadamStep& st, float* var, float* m, float* v, const float* g, int64_t n) {
  if (n == 0) return;
  nadam_kernel<<<blocks_for(n), kThreads, 0, s>>>(st, var, m, v, g, n);
  check_launch("nadam");
}

void weight_decay(cudaStream_t s, float wd, float lr, float* var, int64_t n) {
  if (n == 0) return;
  weight_decay_kernel<<<blocks_for(n), kThreads, 0, s>>>(wd, lr, var, n);
  check_launch("weight_decay");
}

void clip_gradients(cudaStream_t s, int mode, float clip, float* g, int64_t n, const int64_t* ends, int64_t segments,
                    float* scratch) {
  if (n == 0 || segments == 0) return;
  if (mode == 0) {
    clip_value_kernel<<<blocks_for(n), kThreads, 0, s>>>(clip, g, n);
    check_launch("clip_gradients");
    return;
  }
  if (segments > 65535) throw std::runtime_error("clip_gradients: more than 65535 variables");
  segment_squares_kernel<<<dim3(1, static_cast<unsigned>(segments)), kThreads, 0, s>>>(g, n, ends, scratch);
  check_launch("clip_gradients");
  constexpr unsigned kBlocksPerSegment = 8;
  clip_scale_kernel<<<dim3(kBlocksPerSegment, static_cast<unsigned>(segments)), kThreads, 0, s>>>(
      mode == 2 ? 1 : 0, clip, g, n, ends, segments, scratch);
  check_launch("clip_gradients");
}

}  // namespace axon::cuda::launch
