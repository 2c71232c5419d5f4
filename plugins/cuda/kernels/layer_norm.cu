// LayerNorm's and LayerNormGrad's kernels (layer_norm.hpp), the arithmetic
// of layer_norm_math.hpp. Forward: a group of threads per row (its size set
// by k) takes the row's sum, then its sum of (x - mean)^2, each in double as
// strided shares combined in a fixed tree, then writes y. Gradient: dx the
// same way from the row's sums of g and g * xhat; scale_backprop and
// offset_backprop as column sums in double over fixed row chunks, the
// chunks then added in order. No atomics: the same bits every run.
#include "check_launch.cuh"
#include "layer_norm.hpp"
#include "layer_norm_math.hpp"

namespace axon::cuda::launch {

namespace {

constexpr int kThreads = kLayerNormThreads;

__device__ inline double plus(double a, double b) { return a + b; }
__device__ inline double2 plus(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }

// The sum of v over a group of T threads (slots: the group's T shared
// values), every group of the block at once, in a fixed tree; every thread of
// the block calls it, and gets its group's sum.
template <int T, class V>
__device__ V group_sum(V* slots, int lane, V v) {
  slots[lane] = v;
  __syncthreads();
  for (int half = T / 2; half > 0; half /= 2) {
    if (lane < half) slots[lane] = plus(slots[lane], slots[lane + half]);
    __syncthreads();
  }
  const V total = slots[0];
  __syncthreads();  // read by all before the slots are used again
  return total;
}

// T threads per row, kThreads / T rows per block; a block takes row blocks
// blockIdx.x, + gridDim.x, ... The loop's trip count is the block's, so all
// of its threads reach each __syncthreads; threads past the last row add 0.
template <int T>
__global__ void layer_norm_kernel(const float* x, int64_t rows, int64_t k, const float* scale, const float* offset,
                                  float epsilon, int64_t row_blocks, float* y, float* mean_out, float* inv_std_out) {
  __shared__ double part[kThreads];
  const int lane = threadIdx.x % T, group = threadIdx.x / T;
  double* slots = part + group * T;
  for (int64_t rb = blockIdx.x; rb < row_blocks; rb += gridDim.x) {
    const int64_t row = rb * (kThreads / T) + group;
    const bool active = row < rows;
    const float* in = x + (active ? row * k : 0);
    double s = 0.0;
    if (active)
      for (int64_t j = lane; j < k; j += T) s += in[j];
    const double mean = layer_norm_mean(group_sum<T>(slots, lane, s), k);
    double q = 0.0;
    if (active)
      for (int64_t j = lane; j < k; j += T) {
        const double d = in[j] - mean;
        q += d * d;
      }
    const double inv_std = layer_norm_inv_std(group_sum<T>(slots, lane, q), k, epsilon);
    if (!active) continue;
    float* out = y + row * k;
    for (int64_t j = lane; j < k; j += T) out[j] = layer_norm_y(in[j], mean, inv_std, scale[j], offset[j]);
    if (lane == 0) {
      mean_out[row] = static_cast<float>(mean);
      inv_std_out[row] = static_cast<float>(inv_std);
    }
  }
}

// dx, rows as layer_norm_kernel: the row's sums of g = dy * scale and of
// g * xhat, then dx per element.
template <int T>
__global__ void layer_norm_dx_kernel(const float* dy, const float* x, int64_t rows, int64_t k, const float* scale,
                                     const float* mean, const float* inv_std, int64_t row_blocks, float* dx) {
  __shared__ double2 part[kThreads];
  const int lane = threadIdx.x % T, group = threadIdx.x / T;
  double2* slots = part + group * T;
  for (int64_t rb = blockIdx.x; rb < row_blocks; rb += gridDim.x) {
    const int64_t row = rb * (kThreads / T) + group;
    const bool active = row < rows;
    const int64_t at = active ? row * k : 0;
    const float m = active ? mean[row] : 0.f, r = active ? inv_std[row] : 0.f;
    double2 s = make_double2(0.0, 0.0);
    if (active)
      for (int64_t j = lane; j < k; j += T) {
        const double g = static_cast<double>(dy[at + j]) * scale[j];
        s.x += g;
        s.y += g * layer_norm_xhat(x[at + j], m, r);
      }
    const double2 t = group_sum<T>(slots, lane, s);
    if (!active) continue;
    const double mean_g = t.x / static_cast<double>(k), mean_g_xhat = t.y / static_cast<double>(k);
    for (int64_t j = lane; j < k; j += T)
      dx[at + j] = layer_norm_dx(static_cast<double>(dy[at + j]) * scale[j], layer_norm_xhat(x[at + j], m, r), r,
                                 mean_g, mean_g_xhat);
  }
}

// Per row chunk (blockIdx.y) and column: the sums of dy * xhat and of dy,
// kLayerNormLanes row lanes each striding the chunk, then the lanes in order.
__global__ void layer_norm_column_partial_kernel(const float* dy, const float* x, int64_t rows, int64_t k,
                                                 const float* mean, const float* inv_std, int64_t per_chunk,
                                                 double2* partial) {
  __shared__ double2 acc[kLayerNormLanes][kLayerNormTile];
  const int64_t col = blockIdx.x * (int64_t)kLayerNormTile + threadIdx.x;
  const int64_t r0 = blockIdx.y * per_chunk;
  const int64_t r1 = min(rows, r0 + per_chunk);
  double2 s = make_double2(0.0, 0.0);
  if (col < k)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kLayerNormLanes) {
      const int64_t i = r * k + col;
      const double d = dy[i];
      s.x += d * layer_norm_xhat(x[i], mean[r], inv_std[r]);
      s.y += d;
    }
  acc[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && col < k) {
    double2 t = make_double2(0.0, 0.0);
    for (int l = 0; l < kLayerNormLanes; ++l) t = plus(t, acc[l][threadIdx.x]);
    partial[blockIdx.y * k + col] = t;
  }
}

__global__ void layer_norm_column_final_kernel(const double2* partial, int64_t chunks, int64_t k,
                                               float* scale_backprop, float* offset_backprop) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < k; c += (int64_t)gridDim.x * blockDim.x) {
    double2 t = make_double2(0.0, 0.0);
    for (int64_t ch = 0; ch < chunks; ++ch) t = plus(t, partial[ch * k + c]);
    scale_backprop[c] = static_cast<float>(t.x);
    offset_backprop[c] = static_cast<float>(t.y);
  }
}

template <int T>
void launch_forward(cudaStream_t s, const LayerNormRows& g, const float* x, int64_t rows, int64_t k,
                    const float* scale, const float* offset, float epsilon, float* y, float* mean, float* inv_std) {
  layer_norm_kernel<T><<<static_cast<unsigned>(g.grid), kThreads, 0, s>>>(x, rows, k, scale, offset, epsilon,
                                                                          g.row_blocks, y, mean, inv_std);
}

template <int T>
void launch_dx(cudaStream_t s, const LayerNormRows& g, const float* dy, const float* x, int64_t rows, int64_t k,
               const float* scale, const float* mean, const float* inv_std, float* dx) {
  layer_norm_dx_kernel<T><<<static_cast<unsigned>(g.grid), kThreads, 0, s>>>(dy, x, rows, k, scale, mean, inv_std,
                                                                             g.row_blocks, dx);
}

}  // namespace

void layer_norm(cudaStream_t s, const float* x, int64_t rows, int64_t k, const float* scale, const float* offset,
                float epsilon, float* y, float* mean, float* inv_std) {
  const LayerNormRows g = layer_norm_rows(rows, k);
  if (g.grid == 0) return;
  switch (g.row_threads) {
    case 32: launch_forward<32>(s, g, x, rows, k, scale, offset, epsilon, y, mean, inv_std); break;
    case 64: launch_forward<64>(s, g, x, rows, k, scale, offset, epsilon, y, mean, inv_std); break;
    case 128: launch_forward<128>(s, g, x, rows, k, scale, offset, epsilon, y, mean, inv_std); break;
    default: launch_forward<kThreads>(s, g, x, rows, k, scale, offset, epsilon, y, mean, inv_std); break;
  }
  check_launch("layer_norm");
}

int64_t layer_norm_grad_scratch_bytes(int64_t rows, int64_t k) { return layer_norm_partial_bytes(rows, k); }

void layer_norm_grad(cudaStream_t s, const float* dy, const float* x, int64_t rows, int64_t k, const float* scale,
                     const float* mean, const float* inv_std, float* dx, float* scale_backprop,
                     float* offset_backprop, void* scratch) {
  if (k == 0) return;
  auto* partial = static_cast<double2*>(scratch);
  const int64_t chunks = layer_norm_chunks(rows);
  const dim3 grid(static_cast<unsigned>(layer_norm_column_tiles(k)), static_cast<unsigned>(chunks));
  layer_norm_column_partial_kernel<<<grid, dim3(kLayerNormTile, kLayerNormLanes), 0, s>>>(
      dy, x, rows, k, mean, inv_std, layer_norm_rows_per_chunk(rows), partial);
  check_launch("layer_norm_grad");
  layer_norm_column_final_kernel<<<grid_stride_blocks(k, kThreads), kThreads, 0, s>>>(partial, chunks, k,
                                                                                       scale_backprop, offset_backprop);
  check_launch("layer_norm_grad");
  const LayerNormRows g = layer_norm_rows(rows, k);
  if (g.grid == 0) return;
  switch (g.row_threads) {
    case 32: launch_dx<32>(s, g, dy, x, rows, k, scale, mean, inv_std, dx); break;
    case 64: launch_dx<64>(s, g, dy, x, rows, k, scale, mean, inv_std, dx); break;
    case 128: launch_dx<128>(s, g, dy, x, rows, k, scale, mean, inv_std, dx); break;
    default: launch_dx<kThreads>(s, g, dy, x, rows, k, scale, mean, inv_std, dx); break;
  }
  check_launch("layer_norm_grad");
}

}  // namespace axon::cuda::launch
