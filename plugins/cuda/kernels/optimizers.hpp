// Host-side launchers for Keras' optimizers of ABI 1.6 (optimizers.cu). The
// per-step scalars are computed on the host in float32 (optimizers.cpp), the
// elementwise updates round as Keras' separate float32 operations (no FMA
// contraction) and the clipping norms are summed in double, one block per
// variable, in a fixed order: deterministic.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace axon::cuda::launch {

struct SgdStep {
  float lr, momentum;
  int nesterov;
};
struct RmspropStep {
  float lr, rho, one_minus_rho, momentum, eps;
  int centered;
};
struct AmsgradStep {
  float alpha, one_minus_b1, one_minus_b2, eps;
};
struct NadamStep {
  float lr, one_minus_b1, one_minus_b2, eps;
  float u_t1, m_scale_t1, one_minus_u_t, m_scale_t, v_scale;
};

void sgd(cudaStream_t s, const SgdStep& st, float* var, float* velocity, const float* g, int64_t n);
void rmsprop(cudaStream_t s, const RmspropStep& st, float* var, float* velocity, float* momentum, float* average_grad,
             const float* g, int64_t n);
void adam_with_amsgrad(cudaStream_t s, const AmsgradStep& st, float* var, float* m, float* v, float* vhat,
                       const float* g, int64_t n);
void adagrad(cudaStream_t s, float lr, float eps, float* var, float* accumulator, const float* g, int64_t n);
void nadam(cudaStream_t s, const NadamStep& st, float* var, float* m, float* v, const float* g, int64_t n);
void weight_decay(cudaStream_t s, float wd, float lr, float* var, int64_t n);
// Keras' clipping (axon_clip_mode) of g[n] cut at ends[segments] (device
// memory; ends past n or falling are clamped). scratch: `segments` floats.
void clip_gradients(cudaStream_t s, int mode, float clip, float* g, int64_t n, const int64_t* ends, int64_t segments,
                    float* scratch);

}  // namespace axon::cuda::launch
