// Keras' losses of ABI 1.7 on the GPU (plugin_abi.h gives each formula): one
// thread per sample, elementwise steps in float32 as Keras' TensorFlow ops
// round them (compiled without FMA contraction), the row's sums in double.
#include "losses.hpp"
#include "check_launch.cuh"

namespace axon::cuda::launch {
namespace {

constexpr int kThreads = 128;
constexpr float kEps = 1e-7f;
constexpr float kOneMinusEps = 0.99999988079071044921875f;  // float32(1 - 1e-7), as TensorFlow clips
constexpr int kMse = 0, kMae = 1;                            // axon_regression_loss

unsigned blocks_for(int64_t rows) { return static_cast<unsigned>((rows + kThreads - 1) / kThreads); }

__device__ float sign_of(float x) { return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f); }

__device__ void poison(float* loss, float* dx, int64_t row, int64_t classes) {
  loss[row] = NAN;
  for (int64_t j = 0; j < classes; ++j) dx[row * classes + j] = NAN;
}

__global__ void categorical_kernel(Crossentropy a, const float* x, const int32_t* labels, int64_t rows,
                                   int64_t classes, float* loss, float* dx) {
  const int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int32_t label = labels[row];
  if (label < 0 || label >= classes) return poison(loss, dx, row, classes);
  const float* r = x + row * classes;
  float* g = dx + row * classes;
  if (a.from_logits) {
    float mx = r[0];
    for (int64_t j = 1; j < classes; ++j) mx = fmaxf(mx, r[j]);
    double se = 0.0;
    for (int64_t j = 0; j < classes; ++j) se += exp((double)r[j] - mx);
    const double log_se = log(se);
    double l = 0.0;
    for (int64_t j = 0; j < classes; ++j) {
      const float t = (j == label ? a.on : 0.f) + a.off;
      l += (double)t * (log_se - ((double)r[j] - mx));
      g[j] = (float)(exp((double)r[j] - mx) / se) - t;
    }
    loss[row] = (float)l;
    return;
  }
  // p = x / sum(x), q = clip(p): the gradient reaches p only inside the
  // clip's range, then x through the division (g holds dL/dp meanwhile).
  double sum = 0.0;
  for (int64_t j = 0; j < classes; ++j) sum += r[j];
  const float s = (float)sum;
  double l = 0.0, dot = 0.0;
  for (int64_t j = 0; j < classes; ++j) {
    const float t = (j == label ? a.on : 0.f) + a.off;
    const float p = r[j] / s, q = fminf(fmaxf(p, kEps), kOneMinusEps);
    l -= (double)(t * logf(q));
    g[j] = p >= kEps && p <= kOneMinusEps ? -t / q : 0.f;
    dot += (double)g[j] * p;
  }
  for (int64_t j = 0; j < classes; ++j) g[j] = (float)(((double)g[j] - dot) / s);
  loss[row] = (float)l;
}

__global__ void binary_kernel(Crossentropy a, const float* x, const int32_t* labels, int64_t rows, float* loss,
                              float* dx) {
  const int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int32_t label = labels[row];
  if (label < 0 || label > 1) return poison(loss, dx, row, 1);
  const float t = (float)label * a.on + a.off, v = x[row];
  if (a.from_logits) {
    // where(x >= 0) chooses each side of TensorFlow's expression: sigmoid(x) - t.
    const float e = expf(-fabsf(v)), sg = e / (1.f + e);
    loss[row] = (fmaxf(v, 0.f) - v * t) + log1pf(e);
    dx[row] = v >= 0.f ? (1.f - t) - sg : (0.f - t) + sg;
    return;
  }
  const float q = fminf(fmaxf(v, kEps), kOneMinusEps);
  loss[row] = -(t * logf(q) + (1.f - t) * logf(1.f - q));
  dx[row] = v >= kEps && v <= kOneMinusEps ? -t / q + (1.f - t) / (1.f - q) : 0.f;
}

__global__ void regression_kernel(int kind, float delta, const float* x, const int32_t* labels, int64_t rows,
                                  int64_t classes, float* loss, float* dx) {
  const int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int32_t label = labels[row];
  if (classes > 1 && (label < 0 || label >= classes)) return poison(loss, dx, row, classes);
  const float k = (float)classes;
  double l = 0.0;
  for (int64_t j = 0; j < classes; ++j) {
    const float t = classes == 1 ? (float)label : (j == label ? 1.f : 0.f), e = x[row * classes + j] - t;
    float li, gi;
    if (kind == kMse) {
      li = e * e, gi = 2.f * e;
    } else if (kind == kMae) {
      li = fabsf(e), gi = sign_of(e);
    } else if (fabsf(e) <= delta) {
      li = 0.5f * (e * e), gi = e;
    } else {
      li = delta * fabsf(e) - 0.5f * (delta * delta), gi = delta * sign_of(e);
    }
    l += li;
    dx[row * classes + j] = gi / k;
  }
  loss[row] = (float)(l / (double)classes);
}

__global__ void binary_accuracy_kernel(float threshold, const float* x, const int32_t* labels, int64_t rows,
                                       float* correct) {
  const int64_t row = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (row >= rows) return;
  correct[row] = (x[row] > threshold ? 1.f : 0.f) == (float)labels[row] ? 1.f : 0.f;
}

}  // namespace

void categorical_crossentropy(cudaStream_t s, const Crossentropy& a, const float* x, const int32_t* labels,
                              int64_t rows, int64_t classes, float* loss, float* dx) {
  if (rows == 0) return;
  categorical_kernel<<<blocks_for(rows), kThreads, 0, s>>>(a, x, labels, rows, classes, loss, dx);
  check_launch("categorical_crossentropy");
}

void binary_crossentropy(cudaStream_t s, const Crossentropy& a, const float* x, const int32_t* labels, int64_t rows,
                         float* loss, float* dx) {
  if (rows == 0) return;
  binary_kernel<<<blocks_for(rows), kThreads, 0, s>>>(a, x, labels, rows, loss, dx);
  check_launch("binary_crossentropy");
}

void regression_loss(cudaStream_t s, int loss_kind, float delta, const float* x, const int32_t* labels, int64_t rows,
                     int64_t classes, float* loss, float* dx) {
  if (rows == 0) return;
  regression_kernel<<<blocks_for(rows), kThreads, 0, s>>>(loss_kind, delta, x, labels, rows, classes, loss, dx);
  check_launch("regression_loss");
}

void binary_accuracy(cudaStream_t s, float threshold, const float* x, const int32_t* labels, int64_t rows,
                     float* correct) {
  if (rows == 0) return;
  binary_accuracy_kernel<<<blocks_for(rows), kThreads, 0, s>>>(threshold, x, labels, rows, correct);
  check_launch("binary_accuracy");
}

}  // namespace axon::cuda::launch
