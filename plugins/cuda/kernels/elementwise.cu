// axon's own CUDA kernels: the ops cuDNN and cuBLAS do not cover. Reductions
// are two-pass with a fixed order, so results are deterministic.
#include "elementwise.hpp"

#include "check_launch.cuh"
#include "launch_geometry.hpp"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace axon::cuda::launch {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n, int threads = kThreads) { return grid_stride_blocks(n, threads); }

// Blocks of kThreads for one warp per row.
unsigned warp_row_blocks(int64_t rows) {
  constexpr int rows_per_block = kThreads / 32;
  return static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block);
}

__global__ void bias_add_kernel(const float* x, const float* bias, float* y, int64_t n, int64_t cols) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = x[i] + bias[i % cols];
}

constexpr int kColTile = 32;   // columns per block (x)
constexpr int kColRows = 8;    // row lanes per block (y)
constexpr int kMaxChunks = 64; // row chunks in the first pass

int64_t chunks_for(int64_t rows) {
  int64_t c = (rows + 255) / 256;
  return c < 1 ? 1 : (c > kMaxChunks ? kMaxChunks : c);
}

__global__ void column_partial_kernel(const float* x, int64_t rows, int64_t cols, int64_t rows_per_chunk, float* partial) {
  __shared__ float acc[kColRows][kColTile];
  const int64_t col = blockIdx.x * (int64_t)kColTile + threadIdx.x;
  const int64_t r0 = blockIdx.y * rows_per_chunk;
  const int64_t r1 = min(rows, r0 + rows_per_chunk);
  float s = 0.f;
  if (col < cols)
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kColRows) s += x[r * cols + col];
  acc[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float t = 0.f;
    for (int k = 0; k < kColRows; ++k) t += acc[k][threadIdx.x];
    partial[blockIdx.y * cols + col] = t;
  }
}

__global__ void column_final_kernel(const float* partial, int64_t chunks, int64_t cols, float* out) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < cols; c += (int64_t)gridDim.x * blockDim.x) {
    float t = 0.f;
    for (int64_t k = 0; k < chunks; ++k) t += partial[k * cols + c];
    out[c] = t;
  }
}

__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? warp_sums[threadIdx.x] : 0.f;
  if (warp == 0)
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;  // valid in thread 0
}

constexpr int kSumBlocks = 512;

__global__ void sum_partial_kernel(const float* x, int64_t n, float* partial) {
  float s = 0.f;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) s += x[i];
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void sum_final_kernel(const float* partial, int64_t count, float* out) {
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
  s = block_sum(s);
  if (threadIdx.x == 0) out[0] = s;
}

// One warp per row.
__global__ void softmax_xent_kernel(const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                                    float* loss, float* dlogits) {
  const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + (threadIdx.x / 32);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* x = logits + row * classes;
  float* d = dlogits + row * classes;
  const int32_t label = labels[row];
  if (label < 0 || label >= classes) {
    for (int64_t c = lane; c < classes; c += 32) d[c] = NAN;
    if (lane == 0) loss[row] = NAN;
    return;
  }
  float mx = -INFINITY;
  for (int64_t c = lane; c < classes; c += 32) mx = fmaxf(mx, x[c]);
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0.f;
  for (int64_t c = lane; c < classes; c += 32) sum += expf(x[c] - mx);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  const float log_sum = logf(sum);
  for (int64_t c = lane; c < classes; c += 32) d[c] = expf(x[c] - mx - log_sum) - (c == label ? 1.f : 0.f);
  if (lane == 0) loss[row] = log_sum + mx - x[label];
}

__global__ void adam_kernel(float* var, float* m, float* v, const float* g, int64_t n, float lr_t, float b1, float b2,
                            float eps) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const float gi = g[i];
    const float mi = b1 * m[i] + (1.f - b1) * gi;
    const float vi = b2 * v[i] + (1.f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    var[i] -= lr_t * mi / (sqrtf(vi) + eps);
  }
}

// TensorFlow's InTopK (k = 1) and InTopKV2, one warp per row: 1 unless the
// label is out of range, k or more logits of the row are greater than the
// label's, or one is not finite.
__global__ void in_top_k_kernel(const float* logits, const int32_t* labels, int64_t rows, int64_t classes, int k,
                                float* out) {
  const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + (threadIdx.x / 32);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* x = logits + row * classes;
  const int32_t label = labels[row];
  if (label < 0 || label >= classes) {  // the same for the whole warp
    if (lane == 0) out[row] = 0.f;
    return;
  }
  const float target = x[label];
  int not_finite = 0;
  long long greater = 0;
  for (int64_t c = lane; c < classes; c += 32) {
    not_finite |= !isfinite(x[c]);
    greater += x[c] > target;
  }
  not_finite = __any_sync(0xffffffffu, not_finite);
  for (int offset = 16; offset > 0; offset /= 2) greater += __shfl_down_sync(0xffffffffu, greater, offset);
  if (lane == 0) out[row] = !not_finite && greater < k ? 1.f : 0.f;
}

// Keras' accuracy, one warp per row: the argmax with ties to the lower index,
// by the CPU plugin's rule for NaN (its scan from index 0 moves only to a
// greater value): a NaN never wins, and a NaN at index 0 is never beaten.
__global__ void argmax_accuracy_kernel(const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                                       float* out) {
  const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + (threadIdx.x / 32);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* x = logits + row * classes;
  int64_t best_i = 0;
  if (!isnan(x[0])) {  // the same for the whole warp
    // The first largest non-NaN value; index 0 is one, so the warp finds one.
    float best = -INFINITY;
    best_i = classes;  // "none yet"
    for (int64_t c = lane; c < classes; c += 32)
      if (!isnan(x[c]) && (best_i == classes || x[c] > best)) best = x[c], best_i = c;
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, best, o);
      const int64_t oi = __shfl_xor_sync(0xffffffffu, best_i, o);
      if (oi != classes && (best_i == classes || ov > best || (ov == best && oi < best_i))) best = ov, best_i = oi;
    }
  }
  if (lane == 0) out[row] = (best_i == labels[row]) ? 1.f : 0.f;
}

__global__ void fill_kernel(float* y, int64_t n, float value) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = value;
}

__global__ void scale_kernel(const float* x, float* y, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = alpha * x[i];
}

struct AddNArgs {
  const float* x[kAddNMax];
  int count;
};

__global__ void add_n_kernel(AddNArgs a, float* y, int64_t n, bool accumulate) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    float s = accumulate ? y[i] : 0.f;
    for (int k = 0; k < a.count; ++k) s += a.x[k][i];
    y[i] = s;
  }
}

__global__ void normalize_kernel(const uint8_t* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = static_cast<float>(x[i]) / 255.f;
}

constexpr int kTile = 32;

// Block y handles row tiles y, y + gridDim.y, ...: grid.y is capped at 65535
// (launch_geometry.hpp), so tall matrices take several tiles per block.
__global__ void transpose_kernel(const float* x, float* y, int64_t rows, int64_t cols, int64_t row_tiles) {
  __shared__ float tile[kTile][kTile + 1];
  const int64_t c = blockIdx.x * (int64_t)kTile + threadIdx.x;
  const int64_t r_out = blockIdx.x * (int64_t)kTile;  // output row block = input column block
  for (int64_t rt = blockIdx.y; rt < row_tiles; rt += gridDim.y) {  // same trip count for the whole block
    for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
      const int64_t r = rt * kTile + k;
      if (r < rows && c < cols) tile[k][threadIdx.x] = x[r * cols + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += blockDim.y) {
      const int64_t orow = r_out + k;                 // input column
      const int64_t ocol = rt * kTile + threadIdx.x;  // input row
      if (orow < cols && ocol < rows) y[orow * rows + ocol] = tile[threadIdx.x][k];
    }
    __syncthreads();  // the tile is refilled for the next row tile
  }
}

__global__ void activation_kernel(Activation op, ActivationParams p, const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = activate(op, x[i], p);
}

__global__ void activation_grad_kernel(Activation op, ActivationParams p, const float* dy, const float* v, float* dx,
                                       int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    dx[i] = activation_grad(op, dy[i], v[i], p);
}

__global__ void binary_kernel(Binary op, const float* a, const float* b, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = binary(op, a[i], b[i]);
}

__global__ void maximum_grad_kernel(const float* dy, const float* a, const float* b, float* da, float* db, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const bool first = a[i] >= b[i];
    da[i] = first ? dy[i] : 0.f;
    db[i] = first ? 0.f : dy[i];
  }
}

__global__ void moving_average_kernel(float* var, const float* value, int64_t n, float momentum, float weight) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    var[i] = __fadd_rn(__fmul_rn(momentum, var[i]), __fmul_rn(weight, value[i]));  // never an FMA: TF's roundings
}

// One warp per row: the maximum, then the sum of exp(x - max), each reduced
// across the warp in a fixed order.
__global__ void softmax_kernel(const float* x, float* y, int64_t rows, int64_t cols) {
  const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + (threadIdx.x / 32);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* in = x + row * cols;
  float* out = y + row * cols;
  float mx = -INFINITY;
  for (int64_t c = lane; c < cols; c += 32) mx = fmaxf(mx, in[c]);
  for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  float sum = 0.f;
  for (int64_t c = lane; c < cols; c += 32) sum += expf(in[c] - mx);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  for (int64_t c = lane; c < cols; c += 32) out[c] = expf(in[c] - mx) / sum;
}

__global__ void softmax_grad_kernel(const float* dy, const float* y, float* dx, int64_t rows, int64_t cols) {
  const int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + (threadIdx.x / 32);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int64_t at = row * cols;
  float dot = 0.f;
  for (int64_t c = lane; c < cols; c += 32) dot += dy[at + c] * y[at + c];
  for (int o = 16; o > 0; o >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, o);
  for (int64_t c = lane; c < cols; c += 32) dx[at + c] = (dy[at + c] - dot) * y[at + c];
}

__global__ void window_kernel(Window w, const float* src, float* dst, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t from = window_source(w, i);
    dst[i] = from < 0 ? 0.f : src[from];
  }
}

struct PermuteShape {
  int rank;
  int64_t out_dims[kMaxPermuteRank];
  int64_t in_strides[kMaxPermuteRank];  // x's stride of the axis that is y's axis i
};

__global__ void permute_kernel(const float* x, float* y, PermuteShape p, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    int64_t rest = i, from = 0;
    for (int k = p.rank - 1; k >= 0; --k) {
      from += (rest % p.out_dims[k]) * p.in_strides[k];
      rest /= p.out_dims[k];
    }
    y[i] = x[from];
  }
}

__global__ void window_copy_kernel(const float* src, int64_t sh, int64_t sw, int64_t ch, float* dst, int64_t dh, int64_t dw,
                                   int64_t off_h, int64_t off_w, float fill, int64_t total) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
    const int64_t c = i % ch;
    int64_t t = i / ch;
    const int64_t w = t % dw;
    t /= dw;
    const int64_t h = t % dh;
    const int64_t n = t / dh;
    const int64_t y = h + off_h, x = w + off_w;
    dst[i] = (y >= 0 && y < sh && x >= 0 && x < sw) ? src[((n * sh + y) * sw + x) * ch + c] : fill;
  }
}

}  // namespace

void bias_add(cudaStream_t s, const float* x, const float* bias, float* y, int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  if (n == 0) return;
  bias_add_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, bias, y, n, cols);
  check_launch("bias_add");
}

int64_t column_sum_scratch(int64_t rows, int64_t cols) { return chunks_for(rows) * cols; }

void column_sum(cudaStream_t s, const float* x, int64_t rows, int64_t cols, float* out, float* scratch) {
  if (cols == 0) return;
  const int64_t chunks = chunks_for(rows);
  const int64_t per_chunk = (rows + chunks - 1) / chunks;
  dim3 grid(static_cast<unsigned>((cols + kColTile - 1) / kColTile), static_cast<unsigned>(chunks));
  column_partial_kernel<<<grid, dim3(kColTile, kColRows), 0, s>>>(x, rows, cols, per_chunk < 1 ? 1 : per_chunk, scratch);
  check_launch("column_sum");
  column_final_kernel<<<blocks_for(cols), kThreads, 0, s>>>(scratch, chunks, cols, out);
  check_launch("column_sum");
}

int64_t sum_scratch(int64_t) { return kSumBlocks; }

void sum_all(cudaStream_t s, const float* x, int64_t n, float* out, float* scratch) {
  const unsigned blocks = n == 0 ? 1 : std::min<unsigned>(kSumBlocks, blocks_for(n));
  sum_partial_kernel<<<blocks, kThreads, 0, s>>>(x, n, scratch);
  check_launch("sum");
  sum_final_kernel<<<1, kThreads, 0, s>>>(scratch, blocks, out);
  check_launch("sum");
}

void softmax_cross_entropy(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                           float* loss, float* dlogits) {
  if (rows == 0) return;
  constexpr int rows_per_block = kThreads / 32;
  softmax_xent_kernel<<<static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block), kThreads, 0, s>>>(
      logits, labels, rows, classes, loss, dlogits);
  check_launch("softmax_cross_entropy");
}

void adam(cudaStream_t s, float* var, float* m, float* v, const float* grad, int64_t n, float lr_t, float beta_1,
          float beta_2, float epsilon) {
  if (n == 0) return;
  adam_kernel<<<blocks_for(n), kThreads, 0, s>>>(var, m, v, grad, n, lr_t, beta_1, beta_2, epsilon);
  check_launch("adam");
}

void in_top_k(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes, int k,
              float* correct) {
  if (rows == 0) return;
  constexpr int rows_per_block = kThreads / 32;
  in_top_k_kernel<<<static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block), kThreads, 0, s>>>(
      logits, labels, rows, classes, k, correct);
  check_launch("in_top_k");
}

void argmax_accuracy(cudaStream_t s, const float* logits, const int32_t* labels, int64_t rows, int64_t classes,
                     float* correct) {
  if (rows == 0) return;
  constexpr int rows_per_block = kThreads / 32;
  argmax_accuracy_kernel<<<static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block), kThreads, 0, s>>>(
      logits, labels, rows, classes, correct);
  check_launch("sparse_categorical_accuracy");
}

void fill(cudaStream_t s, float* y, int64_t n, float value) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(y, n, value);
  check_launch("fill");
}

void scale(cudaStream_t s, const float* x, float* y, int64_t n, float alpha) {
  if (n == 0) return;
  scale_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n, alpha);
  check_launch("scale");
}

void add_n(cudaStream_t s, const float* const* xs, int count, float* y, int64_t n, bool accumulate) {
  if (n == 0) return;
  AddNArgs a{};
  a.count = count;
  for (int k = 0; k < count && k < kAddNMax; ++k) a.x[k] = xs[k];
  add_n_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, y, n, accumulate);
  check_launch("add_n");
}

void normalize_image(cudaStream_t s, const uint8_t* x, float* y, int64_t n) {
  if (n == 0) return;
  normalize_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, y, n);
  check_launch("normalize_image");
}

void transpose(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0) return;
  const TileGrid g = tile_grid(rows, cols, kTile);
  if (g.x > kMaxGridX) throw std::runtime_error("transpose: " + std::to_string(cols) + " columns exceed the grid");
  dim3 grid(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y));
  transpose_kernel<<<grid, dim3(kTile, 8), 0, s>>>(x, y, rows, cols, g.row_tiles);
  check_launch("transpose");
}

void activation(cudaStream_t s, Activation op, const ActivationParams& p, const float* x, float* y, int64_t n) {
  if (n == 0) return;
  activation_kernel<<<blocks_for(n), kThreads, 0, s>>>(op, p, x, y, n);
  check_launch("activation");
}

void activation_grad(cudaStream_t s, Activation op, const ActivationParams& p, const float* dy, const float* v,
                     float* dx, int64_t n) {
  if (n == 0) return;
  activation_grad_kernel<<<blocks_for(n), kThreads, 0, s>>>(op, p, dy, v, dx, n);
  check_launch("activation_grad");
}

void binary(cudaStream_t s, Binary op, const float* a, const float* b, float* y, int64_t n) {
  if (n == 0) return;
  binary_kernel<<<blocks_for(n), kThreads, 0, s>>>(op, a, b, y, n);
  check_launch("binary");
}

void maximum_grad(cudaStream_t s, const float* dy, const float* a, const float* b, float* da, float* db, int64_t n) {
  if (n == 0) return;
  maximum_grad_kernel<<<blocks_for(n), kThreads, 0, s>>>(dy, a, b, da, db, n);
  check_launch("maximum_grad");
}

void moving_average(cudaStream_t s, float* var, const float* value, int64_t n, float momentum, float weight) {
  if (n == 0) return;
  moving_average_kernel<<<blocks_for(n), kThreads, 0, s>>>(var, value, n, momentum, weight);
  check_launch("moving_average");
}

void softmax(cudaStream_t s, const float* x, float* y, int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0) return;
  softmax_kernel<<<warp_row_blocks(rows), kThreads, 0, s>>>(x, y, rows, cols);
  check_launch("softmax");
}

void softmax_grad(cudaStream_t s, const float* dy, const float* y, float* dx, int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0) return;
  softmax_grad_kernel<<<warp_row_blocks(rows), kThreads, 0, s>>>(dy, y, dx, rows, cols);
  check_launch("softmax_grad");
}

void window(cudaStream_t s, const Window& w, const float* src, float* dst) {
  int64_t total = 1;
  for (int k = 0; k < w.rank; ++k) total *= w.dst_dims[k];
  if (total == 0) return;
  window_kernel<<<blocks_for(total), kThreads, 0, s>>>(w, src, dst, total);
  check_launch("window");
}

void permute(cudaStream_t s, const float* x, int rank, const int64_t* dims, const int* perm, float* y) {
  if (rank < 1 || rank > kMaxPermuteRank) throw std::runtime_error("permute: rank " + std::to_string(rank));
  PermuteShape p{};
  p.rank = rank;
  int64_t strides[kMaxPermuteRank], total = 1;
  for (int k = rank - 1; k >= 0; --k) strides[k] = total, total *= dims[k];
  for (int k = 0; k < rank; ++k) p.out_dims[k] = dims[perm[k]], p.in_strides[k] = strides[perm[k]];
  if (total == 0) return;
  permute_kernel<<<blocks_for(total), kThreads, 0, s>>>(x, y, p, total);
  check_launch("permute");
}

void window_copy(cudaStream_t s, const float* src, int64_t batch, int64_t src_h, int64_t src_w, int64_t channels,
                 float* dst, int64_t dst_h, int64_t dst_w, int64_t off_h, int64_t off_w, float fill) {
  const int64_t total = batch * dst_h * dst_w * channels;
  if (total == 0) return;
  window_copy_kernel<<<blocks_for(total), kThreads, 0, s>>>(src, src_h, src_w, channels, dst, dst_h, dst_w, off_h, off_w,
                                                           fill, total);
  check_launch("window_copy");
}

bool have_code_for_current_device(std::string& why) {
  cudaFuncAttributes attr{};
  cudaError_t e = cudaFuncGetAttributes(&attr, fill_kernel);
  if (e == cudaSuccess) return true;
  why = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
  cudaGetLastError();  // clear it
  return false;
}

}  // namespace axon::cuda::launch
