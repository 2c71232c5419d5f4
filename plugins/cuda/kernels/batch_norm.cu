// Batch normalization's kernels (batch_norm.hpp): column sums in double over
// row chunks (a fixed order), the per-column arithmetic of
// batch_norm_math.hpp, and one elementwise pass; with relu (_FusedBatchNormEx
// and its gradient) applied in that pass, and dy masked by relu's output
// wherever the gradient reads it. _FusedBatchNormAddEx adds its side input in
// that pass before relu; its gradient's sums pass writes the masked dy as
// side_input_backprop, and dx's pass reads that instead of dy and y.
#include "batch_norm.hpp"
#include "batch_norm_math.hpp"
#include "check_launch.cuh"
#include "launch_geometry.hpp"

namespace axon::cuda::launch {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;       // columns per block
constexpr int kLanes = 8;       // row lanes per block
constexpr int kMaxChunks = 64;  // row chunks in the first pass

unsigned blocks_for(int64_t n) { return grid_stride_blocks(n, kThreads); }

int64_t chunks_for(int64_t rows) {
  const int64_t c = (rows + 255) / 256;
  return c < 1 ? 1 : (c > kMaxChunks ? kMaxChunks : c);
}

// The scratch: partial sums, sums, the batch mean in double; per-column floats.
struct Scratch {
  double2* partial;  // [chunks, cols]
  double2* sums;     // [cols]
  double* mean;      // [cols]
  float* f[3];       // [cols] each
};

Scratch carve(void* base, int64_t rows, int64_t cols) {
  Scratch s;
  s.partial = static_cast<double2*>(base);
  s.sums = s.partial + chunks_for(rows) * cols;
  s.mean = reinterpret_cast<double*>(s.sums + cols);
  float* f = reinterpret_cast<float*>(s.mean + cols);
  for (int k = 0; k < 3; ++k) s.f[k] = f + k * cols;
  return s;
}

struct SumX {
  const float* x;
  int64_t cols;
  __device__ double2 operator()(int64_t r, int64_t c) const { return make_double2(x[r * cols + c], 0.0); }
};

struct CenteredSquares {
  const float* x;
  const double* mean;
  int64_t cols;
  __device__ double2 operator()(int64_t r, int64_t c) const {
    const double d = x[r * cols + c] - mean[c];
    return make_double2(d * d, 0.0);
  }
};

// dy where relu's output y is positive, else 0 (ReluGrad); dy itself without y.
__device__ inline float masked(const float* dy, const float* y, int64_t i) {
  return y == nullptr || y[i] > 0.f ? dy[i] : 0.f;
}

// dy (masked by relu's output y, when given), and dy * (x - mean). The sums
// visit each element once, so they also store that dy to g_out when given.
struct GradTerms {
  const float* dy;
  const float* y;
  const float* x;
  const float* mean;
  int64_t cols;
  float* g_out;
  __device__ double2 operator()(int64_t r, int64_t c) const {
    const int64_t i = r * cols + c;
    const float g = masked(dy, y, i);
    const double2 t = make_double2(g, g * (static_cast<double>(x[i]) - mean[c]));
    if (g_out != nullptr) g_out[i] = g;
    return t;
  }
};

template <class Term>
__global__ void column_partial_kernel(Term term, int64_t rows, int64_t cols, int64_t per_chunk, double2* partial) {
  __shared__ double2 acc[kLanes][kTile];
  const int64_t col = blockIdx.x * (int64_t)kTile + threadIdx.x;
  const int64_t r0 = blockIdx.y * per_chunk;
  const int64_t r1 = min(rows, r0 + per_chunk);
  double2 s = make_double2(0.0, 0.0);
  if (col < cols)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kLanes) {
      const double2 t = term(r, col);
      s.x += t.x;
      s.y += t.y;
    }
  acc[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    double2 t = make_double2(0.0, 0.0);
    for (int k = 0; k < kLanes; ++k) t.x += acc[k][threadIdx.x].x, t.y += acc[k][threadIdx.x].y;
    partial[blockIdx.y * cols + col] = t;
  }
}

__global__ void column_final_kernel(const double2* partial, int64_t chunks, int64_t cols, double2* out) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x) {
    double2 t = make_double2(0.0, 0.0);
    for (int64_t k = 0; k < chunks; ++k) t.x += partial[k * cols + c].x, t.y += partial[k * cols + c].y;
    out[c] = t;
  }
}

// sums[c] = the sums over rows of term(r, c).
template <class Term>
void column_sums(cudaStream_t s, Term term, int64_t rows, int64_t cols, const Scratch& sc) {
  const int64_t chunks = chunks_for(rows);
  const int64_t per_chunk = (rows + chunks - 1) / chunks;
  dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>(chunks));
  column_partial_kernel<<<grid, dim3(kTile, kLanes), 0, s>>>(term, rows, cols, per_chunk, sc.partial);
  check_launch("batch_norm");
  column_final_kernel<<<blocks_for(cols), kThreads, 0, s>>>(sc.partial, chunks, cols, sc.sums);
  check_launch("batch_norm");
}

__global__ void mean_kernel(const double2* sums, int64_t rows, int64_t cols, double* mean) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x)
    mean[c] = sums[c].x / static_cast<double>(rows);
}

// Training: the statistics' outputs; f[0] the batch mean, f[1] the coefficient.
__global__ void training_stats_kernel(const double* mean, const double2* squares, int64_t rows, int64_t cols,
                                      const float* scale, const float* old_mean, const float* old_variance,
                                      float epsilon, float factor, float* batch_mean, float* batch_variance,
                                      float* saved_mean, float* saved_variance, float* mean_f, float* coefficient) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x) {
    const BatchStats st = batch_norm_stats(mean[c], squares[c].x, rows, old_mean[c], old_variance[c], factor);
    batch_mean[c] = st.running_mean;
    batch_variance[c] = st.running_variance;
    saved_mean[c] = st.mean;
    saved_variance[c] = st.variance;
    mean_f[c] = st.mean;
    coefficient[c] = batch_norm_coefficient(scale[c], st.variance, epsilon);
  }
}

__global__ void inference_coefficient_kernel(const float* scale, const float* variance, float epsilon, int64_t cols,
                                             float* coefficient) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x)
    coefficient[c] = batch_norm_coefficient(scale[c], variance[c], epsilon);
}

// side: null, or added after normalizing and before relu (as AddN then Relu).
__global__ void normalize_kernel(const float* x, int64_t n, int64_t cols, const float* mean, const float* coefficient,
                                 const float* offset, const float* side, bool relu, float* y) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = i % cols;
    float v = (x[i] - mean[c]) * coefficient[c] + offset[c];
    if (side != nullptr) v += side[i];
    y[i] = relu ? (v > 0.f ? v : 0.f) : v;  // NaN -> 0, as Relu
  }
}

__global__ void grad_coefficients_kernel(const double2* sums, int64_t rows, int64_t cols, const float* scale,
                                         const float* variance, float epsilon, bool training, float* scale_backprop,
                                         float* offset_backprop, float* k_dy, float* k_x, float* k_1) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x) {
    const BatchNormGrad g = batch_norm_gradient(sums[c].x, sums[c].y, rows, scale[c], variance[c], epsilon, training);
    scale_backprop[c] = g.scale_backprop;
    offset_backprop[c] = g.offset_backprop;
    k_dy[c] = g.k_dy;
    k_x[c] = g.k_x;
    k_1[c] = g.k_1;
  }
}

__global__ void grad_kernel(const float* dy, const float* relu_y, const float* x, int64_t n, int64_t cols,
                            const float* mean, const float* k_dy, const float* k_x, const float* k_1, float* dx) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = i % cols;
    dx[i] = k_dy[c] * masked(dy, relu_y, i) + k_x[c] * (x[i] - mean[c]) + k_1[c];
  }
}

}  // namespace

int64_t batch_norm_scratch_bytes(int64_t rows, int64_t cols) {
  return (chunks_for(rows) * cols + cols) * static_cast<int64_t>(sizeof(double2)) +
         cols * static_cast<int64_t>(sizeof(double)) + 3 * cols * static_cast<int64_t>(sizeof(float));
}

void batch_norm_training(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                         const float* offset, const float* old_mean, const float* old_variance, float epsilon,
                         float factor, bool relu, const float* side_input, float* y, float* batch_mean,
                         float* batch_variance, float* saved_mean, float* saved_variance, void* scratch) {
  if (cols == 0) return;
  const Scratch sc = carve(scratch, rows, cols);
  column_sums(s, SumX{x, cols}, rows, cols, sc);
  mean_kernel<<<blocks_for(cols), kThreads, 0, s>>>(sc.sums, rows, cols, sc.mean);
  check_launch("batch_norm");
  column_sums(s, CenteredSquares{x, sc.mean, cols}, rows, cols, sc);
  training_stats_kernel<<<blocks_for(cols), kThreads, 0, s>>>(sc.mean, sc.sums, rows, cols, scale, old_mean,
                                                              old_variance, epsilon, factor, batch_mean, batch_variance,
                                                              saved_mean, saved_variance, sc.f[0], sc.f[1]);
  check_launch("batch_norm");
  if (rows == 0) return;
  normalize_kernel<<<blocks_for(rows * cols), kThreads, 0, s>>>(x, rows * cols, cols, sc.f[0], sc.f[1], offset,
                                                                side_input, relu, y);
  check_launch("batch_norm");
}

void batch_norm_inference(cudaStream_t s, const float* x, int64_t rows, int64_t cols, const float* scale,
                          const float* offset, const float* mean, const float* variance, float epsilon, bool relu,
                          const float* side_input, float* y, void* scratch) {
  if (cols == 0 || rows == 0) return;
  const Scratch sc = carve(scratch, rows, cols);
  inference_coefficient_kernel<<<blocks_for(cols), kThreads, 0, s>>>(scale, variance, epsilon, cols, sc.f[1]);
  check_launch("batch_norm");
  normalize_kernel<<<blocks_for(rows * cols), kThreads, 0, s>>>(x, rows * cols, cols, mean, sc.f[1], offset,
                                                                side_input, relu, y);
  check_launch("batch_norm");
}

void batch_norm_grad(cudaStream_t s, const float* dy, const float* relu_y, float* side_input_backprop, const float* x,
                     int64_t rows, int64_t cols, const float* scale, const float* mean, const float* variance,
                     float epsilon, bool training, float* dx, float* scale_backprop, float* offset_backprop,
                     void* scratch) {
  if (cols == 0) return;
  const Scratch sc = carve(scratch, rows, cols);
  column_sums(s, GradTerms{dy, relu_y, x, mean, cols, side_input_backprop}, rows, cols, sc);
  grad_coefficients_kernel<<<blocks_for(cols), kThreads, 0, s>>>(sc.sums, rows, cols, scale, variance, epsilon,
                                                                 training, scale_backprop, offset_backprop, sc.f[0],
                                                                 sc.f[1], sc.f[2]);
  check_launch("batch_norm");
  if (rows == 0) return;
  if (side_input_backprop != nullptr) dy = side_input_backprop, relu_y = nullptr;  // dx's pass: one read, not two
  grad_kernel<<<blocks_for(rows * cols), kThreads, 0, s>>>(dy, relu_y, x, rows * cols, cols, mean, sc.f[0], sc.f[1],
                                                           sc.f[2], dx);
  check_launch("batch_norm");
}

}  // namespace axon::cuda::launch
