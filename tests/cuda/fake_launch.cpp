// Host versions of the launchers of axon's own CUDA kernels (elementwise.hpp,
// pooling.hpp) that the kernel areas linked into the fake-library tests
// call, over the same per-element arithmetic (*_math.hpp): with the fake
// runtime, "device memory" is host memory and work runs at once.
#include "elementwise.hpp"
#include "pooling.hpp"

#include <algorithm>
#include <cmath>

namespace axon::cuda::launch {

void fill(cudaStream_t, float* y, int64_t n, float value) { std::fill(y, y + n, value); }

void transpose(cudaStream_t, const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
}

void window_copy(cudaStream_t, const float* src, int64_t batch, int64_t src_h, int64_t src_w, int64_t channels,
                 float* dst, int64_t dst_h, int64_t dst_w, int64_t off_h, int64_t off_w, float fill) {
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t h = 0; h < dst_h; ++h)
      for (int64_t w = 0; w < dst_w; ++w)
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t y = h + off_h, x = w + off_w;
          dst[((n * dst_h + h) * dst_w + w) * channels + c] =
              y >= 0 && y < src_h && x >= 0 && x < src_w ? src[((n * src_h + y) * src_w + x) * channels + c] : fill;
        }
}

void permute(cudaStream_t, const float* x, int rank, const int64_t* dims, const int* perm, float* y) {
  int64_t strides[kMaxPermuteRank], total = 1;
  for (int k = rank - 1; k >= 0; --k) strides[k] = total, total *= dims[k];
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, from = 0;
    for (int k = rank - 1; k >= 0; --k) {
      from += (rest % dims[perm[k]]) * strides[perm[k]];
      rest /= dims[perm[k]];
    }
    y[i] = x[from];
  }
}

// MaxPoolGrad's two passes, per element on the host (pool_math.hpp).
int64_t max_pool_grad_scratch(const PoolShape& p) { return p.n * p.oh * p.ow * p.c; }
void max_pool_grad(cudaStream_t, const PoolShape& p, const float* x, const float* dy, float* dx, int32_t* taps) {
  for (int64_t o = 0; o < max_pool_grad_scratch(p); ++o) taps[o] = max_pool_first_max_tap(p, x, o);
  for (int64_t i = 0; i < p.n * p.h * p.w * p.c; ++i) dx[i] = max_pool_grad_at(p, taps, dy, i);
}

void avg_pool(cudaStream_t, const PoolShape& p, const float* x, float* y) {
  for (int64_t o = 0; o < p.n * p.oh * p.ow * p.c; ++o) y[o] = avg_pool_at(p, x, o);
}
void avg_pool_grad(cudaStream_t, const PoolShape& p, const float* dy, float* dx) {
  for (int64_t i = 0; i < p.n * p.h * p.w * p.c; ++i) dx[i] = avg_pool_grad_at(p, dy, i);
}

void activation(cudaStream_t, Activation op, const ActivationParams& p, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = activate(op, x[i], p);
}
void activation_grad(cudaStream_t, Activation op, const ActivationParams& p, const float* dy, const float* v, float* dx,
                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = axon::cuda::activation_grad(op, dy[i], v[i], p);
}
void binary(cudaStream_t, Binary op, const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = axon::cuda::binary(op, a[i], b[i]);
}
void maximum_grad(cudaStream_t, const float* dy, const float* a, const float* b, float* da, float* db, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    da[i] = a[i] >= b[i] ? dy[i] : 0.f;
    db[i] = a[i] >= b[i] ? 0.f : dy[i];
  }
}
void moving_average(cudaStream_t, float* var, const float* value, int64_t n, float momentum, float weight) {
  for (int64_t i = 0; i < n; ++i) var[i] = momentum * var[i] + weight * value[i];
}
void softmax(cudaStream_t, const float* x, float* y, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    const float mx = *std::max_element(in, in + cols);
    float sum = 0.f;
    for (int64_t c = 0; c < cols; ++c) sum += std::exp(in[c] - mx);
    for (int64_t c = 0; c < cols; ++c) y[r * cols + c] = std::exp(in[c] - mx) / sum;
  }
}
void softmax_grad(cudaStream_t, const float* dy, const float* y, float* dx, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float dot = 0.f;
    for (int64_t c = 0; c < cols; ++c) dot += dy[r * cols + c] * y[r * cols + c];
    for (int64_t c = 0; c < cols; ++c) dx[r * cols + c] = (dy[r * cols + c] - dot) * y[r * cols + c];
  }
}
void window(cudaStream_t, const Window& w, const float* src, float* dst) {
  int64_t total = 1;
  for (int k = 0; k < w.rank; ++k) total *= w.dst_dims[k];
  for (int64_t i = 0; i < total; ++i) {
    const int64_t from = window_source(w, i);
    dst[i] = from < 0 ? 0.f : src[from];
  }
}

bool have_code_for_current_device(std::string&) { return true; }

}  // namespace axon::cuda::launch
