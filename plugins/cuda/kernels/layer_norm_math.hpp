// LayerNorm and LayerNormGrad (ABI 2.3) over x [rows, k]: the per-element
// arithmetic, host and device alike (device_math.hpp), and the launch
// arithmetic of layer_norm.cu (host only), so that
// tests/cuda/layer_norm_math_test.cpp checks both without a GPU. Row sums
// and column sums are taken in double, as the reference plugin's, and the
// arithmetic on them is in double, rounded to float once.
#pragma once

#include "device_math.hpp"
#include "launch_geometry.hpp"

#include <cmath>
#include <cstdint>

namespace axon::cuda {

// --- per element -------------------------------------------------------------

// A row's mean from the sum of its k values (k = 0: NaN, as TensorFlow's
// moments over nothing).
AXON_HD inline double layer_norm_mean(double sum, int64_t k) { return sum / static_cast<double>(k); }

// 1 / sqrt(variance + epsilon), variance the biased one: the sum of
// (x - mean)^2 over the row, over k.
AXON_HD inline double layer_norm_inv_std(double centered_squares, int64_t k, float epsilon) {
  return 1.0 / sqrt(centered_squares / static_cast<double>(k) + static_cast<double>(epsilon));
}

// y = (x - mean) * inv_std * scale + offset, from the row's statistics in double.
AXON_HD inline float layer_norm_y(float x, double mean, double inv_std, float scale, float offset) {
  return static_cast<float>((x - mean) * inv_std * scale + offset);
}

// xhat = (x - mean) * inv_std, from the forward's outputs (float).
AXON_HD inline double layer_norm_xhat(float x, float mean, float inv_std) {
  return (x - static_cast<double>(mean)) * static_cast<double>(inv_std);
}

// dx = inv_std * (g - mean(g) - xhat * mean(g * xhat)), g = dy * scale;
// mean_g and mean_g_xhat: the row's sums of g and g * xhat over k.
AXON_HD inline float layer_norm_dx(double g, double xhat, double inv_std, double mean_g, double mean_g_xhat) {
  return static_cast<float>(inv_std * (g - mean_g - xhat * mean_g_xhat));
}

// --- launch geometry (host) ------------------------------------------------------

constexpr int kLayerNormThreads = 256;  // threads per block, both row kernels

// The row kernels: a group of `row_threads` threads per row (a warp up to the
// whole block, by k alone, so a row's sums have the same order for any
// number of rows), `rows_per_block` groups per block. Block b takes row
// blocks b, b + grid, ... (grid at most kMaxGridStrideBlocks), group g of
// row block rb the row rb * rows_per_block + g.
struct LayerNormRows {
  int row_threads = 32;
  int rows_per_block = kLayerNormThreads / 32;
  int64_t row_blocks = 0;
  int64_t grid = 0;  // 0: no rows, nothing to launch
};

inline LayerNormRows layer_norm_rows(int64_t rows, int64_t k) {
  LayerNormRows g;
  while (g.row_threads < kLayerNormThreads && int64_t{g.row_threads} * 4 < k) g.row_threads *= 2;
  g.rows_per_block = kLayerNormThreads / g.row_threads;
  g.row_blocks = (rows + g.rows_per_block - 1) / g.rows_per_block;
  g.grid = g.row_blocks < kMaxGridStrideBlocks ? g.row_blocks : kMaxGridStrideBlocks;
  return g;
}

// The gradient's column sums (scale_backprop, offset_backprop): rows cut
// into chunks fixed by the row count (at most kLayerNormMaxChunks), one
// partial per chunk and column, then the chunks added in order. Blocks of
// kLayerNormTile columns by kLayerNormLanes row lanes; grid (column tiles,
// chunks). Zero rows: one chunk of none, so the sums are zeros.
constexpr int kLayerNormTile = 32;
constexpr int kLayerNormLanes = 8;
constexpr int64_t kLayerNormMaxChunks = 64;

inline int64_t layer_norm_chunks(int64_t rows) {
  const int64_t c = (rows + 255) / 256;
  return c < 1 ? 1 : (c > kLayerNormMaxChunks ? kLayerNormMaxChunks : c);
}

inline int64_t layer_norm_rows_per_chunk(int64_t rows) {
  const int64_t chunks = layer_norm_chunks(rows);
  return (rows + chunks - 1) / chunks;
}

// Column tiles: k / 32 blocks fit grid.x (2^31 - 1) for any k a device can
// hold (k up to 6.8e10 floats).
inline int64_t layer_norm_column_tiles(int64_t k) { return (k + kLayerNormTile - 1) / kLayerNormTile; }

// The gradient's scratch, the partial sums: two doubles per chunk and column.
inline int64_t layer_norm_partial_bytes(int64_t rows, int64_t k) {
  return layer_norm_chunks(rows) * k * 2 * static_cast<int64_t>(sizeof(double));
}

}  // namespace axon::cuda
