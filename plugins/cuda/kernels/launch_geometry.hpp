// Launch sizes for axon's own kernels that must stay inside CUDA's grid
// limits (grid.y at most 65535 blocks). Host-only arithmetic, so it is tested
// without a GPU (tests/cuda/launch_geometry_test.cpp).
#pragma once

#include <cstdint>

namespace axon::cuda {

constexpr int64_t kMaxGridX = 2147483647;  // 2^31 - 1
constexpr int64_t kMaxGridY = 65535;

struct TileGrid {
  int64_t x = 0;          // blocks over the column tiles
  int64_t y = 0;          // blocks over the row tiles, at most kMaxGridY
  int64_t row_tiles = 0;  // the kernel's block y takes row tiles y, y + grid.y, ...
};

// Tiles of `tile` x `tile` over a [rows, cols] matrix. Rows beyond
// kMaxGridY * tile (2,097,120 for 32) are covered by the kernel striding over
// row tiles, not by more blocks.
inline TileGrid tile_grid(int64_t rows, int64_t cols, int64_t tile) {
  TileGrid g;
  g.x = (cols + tile - 1) / tile;
  g.row_tiles = (rows + tile - 1) / tile;
  g.y = g.row_tiles < kMaxGridY ? g.row_tiles : kMaxGridY;
  return g;
}

// Blocks of `threads` for a grid-stride loop over n elements: at least one,
// and at most kMaxGridStrideBlocks (the loop covers the rest).
constexpr int64_t kMaxGridStrideBlocks = int64_t{65535} * 32;
inline unsigned grid_stride_blocks(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b < 1 ? 1 : b > kMaxGridStrideBlocks ? kMaxGridStrideBlocks : b);
}

}  // namespace axon::cuda
