// Launch sizes of the CUDA plugin's tiled transpose (launch_geometry.hpp),
// checked on the host: grid.y stays inside CUDA's limit of 65535 for any
// height, and the kernel's stride over row tiles (block y takes tiles y,
// y + grid.y, ...) reaches every tile exactly once. Before the stride, more
// than 2,097,120 rows gave grid.y > 65535 and the launch failed.
#include <catch2/catch.hpp>

#include "launch_geometry.hpp"

#include <vector>

using axon::cuda::grid_stride_blocks;
using axon::cuda::kMaxGridStrideBlocks;
using axon::cuda::kMaxGridY;
using axon::cuda::tile_grid;

namespace {

// Row tiles visited, counted per tile, as the kernel's loop visits them.
std::vector<int> visits(const axon::cuda::TileGrid& g) {
  std::vector<int> seen(static_cast<size_t>(g.row_tiles), 0);
  for (int64_t by = 0; by < g.y; ++by)
    for (int64_t rt = by; rt < g.row_tiles; rt += g.y) ++seen[static_cast<size_t>(rt)];
  return seen;
}

}  // namespace

TEST_CASE("transpose grid stays inside CUDA's grid.y limit", "[cuda][launch]") {
  for (int64_t rows : {int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{2097120}, int64_t{2097121},
                       int64_t{2100000}, int64_t{100000000}, int64_t{5000000000}}) {
    INFO("rows " << rows);
    const auto g = tile_grid(rows, 64, 32);
    CHECK(g.row_tiles == (rows + 31) / 32);
    CHECK(g.y >= 1);
    CHECK(g.y <= kMaxGridY);
    CHECK(g.x == 2);
    // Small matrices keep one row tile per block (no stride).
    if (g.row_tiles <= kMaxGridY) CHECK(g.y == g.row_tiles);
  }
}

TEST_CASE("transpose grid's row-tile stride covers every tile once", "[cuda][launch]") {
  for (int64_t rows : {int64_t{1}, int64_t{1000}, int64_t{2097120}, int64_t{2097121}, int64_t{2100000},
                       int64_t{4194241}, int64_t{9000000}}) {
    INFO("rows " << rows);
    const auto g = tile_grid(rows, 1, 32);
    const auto seen = visits(g);
    size_t wrong = 0;
    for (int v : seen) wrong += v != 1;
    CHECK(wrong == 0);
    CHECK(static_cast<int64_t>(seen.size()) * 32 >= rows);
  }
}

TEST_CASE("a grid-stride launch has at least one block and at most the cap", "[cuda][launch]") {
  CHECK(grid_stride_blocks(0, 256) == 1);  // an empty tensor still launches a valid grid
  CHECK(grid_stride_blocks(1, 256) == 1);
  CHECK(grid_stride_blocks(256, 256) == 1);
  CHECK(grid_stride_blocks(257, 256) == 2);
  CHECK(grid_stride_blocks(1000, 128) == 8);
  const int64_t at_cap = kMaxGridStrideBlocks * 256;
  CHECK(grid_stride_blocks(at_cap, 256) == kMaxGridStrideBlocks);
  CHECK(grid_stride_blocks(at_cap + 1, 256) == kMaxGridStrideBlocks);  // the loop strides over the rest
  CHECK(grid_stride_blocks(int64_t{1} << 40, 256) == kMaxGridStrideBlocks);
}
