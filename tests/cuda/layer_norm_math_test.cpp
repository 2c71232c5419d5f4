// The CUDA plugin's LayerNorm and LayerNormGrad (plugins/cuda/kernels/
// layer_norm_math.hpp) on the host: the per-element arithmetic run on row
// sums taken in the kernels' order (strided shares, then a fixed tree)
// against the ABI's formulas in plain double loops, the gradient against
// central differences of the forward, and the launch arithmetic: every row
// reached by exactly one thread group, every row in exactly one chunk of
// the column sums, grids inside CUDA's limits.
#include "layer_norm_math.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using axon::cuda::layer_norm_chunks;
using axon::cuda::layer_norm_rows;
using axon::cuda::layer_norm_rows_per_chunk;
using axon::cuda::LayerNormRows;

namespace {

constexpr float kEpsilon = 0.001f;

// The sum of f(j) over j < k as a row's group of t threads takes it: thread
// l adds j = l, l + t, ... in order, then the tree halves the t shares.
template <class F>
double group_sum(int t, int64_t k, F f) {
  std::vector<double> share(static_cast<size_t>(t), 0.0);
  for (int l = 0; l < t; ++l)
    for (int64_t j = l; j < k; j += t) share[static_cast<size_t>(l)] += f(j);
  for (int half = t / 2; half > 0; half /= 2)
    for (int l = 0; l < half; ++l) share[static_cast<size_t>(l)] += share[static_cast<size_t>(l + half)];
  return share[0];
}

struct Forward {
  std::vector<float> y, mean, inv_std;
};

// layer_norm_kernel's steps, on the host.
Forward kernel_forward(const std::vector<float>& x, int64_t rows, int64_t k, const std::vector<float>& scale,
                       const std::vector<float>& offset) {
  const int t = layer_norm_rows(rows, k).row_threads;
  Forward f{std::vector<float>(x.size()), std::vector<float>(rows), std::vector<float>(rows)};
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x.data() + r * k;
    const double mean = axon::cuda::layer_norm_mean(group_sum(t, k, [&](int64_t j) { return double(in[j]); }), k);
    const double inv_std = axon::cuda::layer_norm_inv_std(group_sum(t, k,
                                                                     [&](int64_t j) {
                                                                       const double d = in[j] - mean;
                                                                       return d * d;
                                                                     }),
                                                          k, kEpsilon);
    for (int64_t j = 0; j < k; ++j)
      f.y[r * k + j] = axon::cuda::layer_norm_y(in[j], mean, inv_std, scale[j], offset[j]);
    f.mean[r] = static_cast<float>(mean);
    f.inv_std[r] = static_cast<float>(inv_std);
  }
  return f;
}

struct Backward {
  std::vector<float> dx, scale_backprop, offset_backprop;
};

// layer_norm_dx_kernel's and the column sums' steps, on the host.
Backward kernel_backward(const std::vector<float>& dy, const std::vector<float>& x, int64_t rows, int64_t k,
                         const std::vector<float>& scale, const std::vector<float>& mean,
                         const std::vector<float>& inv_std) {
  using axon::cuda::layer_norm_xhat;
  const int t = layer_norm_rows(rows, k).row_threads;
  Backward b{std::vector<float>(x.size()), std::vector<float>(k), std::vector<float>(k)};
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * k;
    const float m = mean[r], s = inv_std[r];
    const double sum_g = group_sum(t, k, [&](int64_t j) { return double(dy[at + j]) * scale[j]; });
    const double sum_gx = group_sum(
        t, k, [&](int64_t j) { return double(dy[at + j]) * scale[j] * layer_norm_xhat(x[at + j], m, s); });
    for (int64_t j = 0; j < k; ++j)
      b.dx[at + j] = axon::cuda::layer_norm_dx(double(dy[at + j]) * scale[j], layer_norm_xhat(x[at + j], m, s), s,
                                               sum_g / double(k), sum_gx / double(k));
  }
  // Chunks of rows, lanes within them, then the lanes and the chunks in order.
  const int64_t chunks = layer_norm_chunks(rows), per = layer_norm_rows_per_chunk(rows);
  for (int64_t c = 0; c < k; ++c) {
    double ts = 0.0, to = 0.0;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      double ls[axon::cuda::kLayerNormLanes] = {}, lo[axon::cuda::kLayerNormLanes] = {};
      const int64_t r1 = std::min(rows, (ch + 1) * per);
      for (int l = 0; l < axon::cuda::kLayerNormLanes; ++l)
        for (int64_t r = ch * per + l; r < r1; r += axon::cuda::kLayerNormLanes) {
          ls[l] += double(dy[r * k + c]) * layer_norm_xhat(x[r * k + c], mean[r], inv_std[r]);
          lo[l] += dy[r * k + c];
        }
      double ps = 0.0, po = 0.0;
      for (int l = 0; l < axon::cuda::kLayerNormLanes; ++l) ps += ls[l], po += lo[l];
      ts += ps, to += po;
    }
    b.scale_backprop[c] = static_cast<float>(ts);
    b.offset_backprop[c] = static_cast<float>(to);
  }
  return b;
}

// The ABI's forward in double: y, mean, inv_std.
void reference_forward(const std::vector<double>& x, int64_t rows, int64_t k, const std::vector<double>& scale,
                       const std::vector<double>& offset, std::vector<double>& y, std::vector<double>& mean,
                       std::vector<double>& inv_std) {
  y.assign(x.size(), 0.0);
  mean.assign(rows, 0.0);
  inv_std.assign(rows, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0.0, q = 0.0;
    for (int64_t j = 0; j < k; ++j) s += x[r * k + j];
    mean[r] = s / double(k);
    for (int64_t j = 0; j < k; ++j) q += (x[r * k + j] - mean[r]) * (x[r * k + j] - mean[r]);
    inv_std[r] = 1.0 / std::sqrt(q / double(k) + double(kEpsilon));
    for (int64_t j = 0; j < k; ++j) y[r * k + j] = (x[r * k + j] - mean[r]) * inv_std[r] * scale[j] + offset[j];
  }
}

// sum of w * y: its derivatives are the gradients for dy = w.
double loss(const std::vector<double>& x, int64_t rows, int64_t k, const std::vector<double>& scale,
            const std::vector<double>& offset, const std::vector<float>& w) {
  std::vector<double> y, m, s;
  reference_forward(x, rows, k, scale, offset, y, m, s);
  double l = 0.0;
  for (size_t i = 0; i < y.size(); ++i) l += w[i] * y[i];
  return l;
}

std::vector<float> uniform(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& e : v) e = d(rng);
  return v;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "]: " << got[i] << ", expected " << want[i]);
    CHECK(std::fabs(double(got[i]) - want[i]) <= tol * (1 + std::fabs(want[i])));
  }
}

}  // namespace

TEST_CASE("layer normalization: the kernels' sums and arithmetic against the ABI's formulas", "[cuda][layer_norm]") {
  std::mt19937 rng(7);
  // k across the four group sizes (32, 64, 128, 256 threads a row), a tail
  // shorter than a group, and rows far from zero (the two passes).
  for (int64_t k : {int64_t{1}, int64_t{5}, int64_t{33}, int64_t{200}, int64_t{300}, int64_t{1000}, int64_t{2053}})
    for (float centre : {0.f, 1000.f}) {
      const int64_t rows = 3;
      const std::string what = "k " + std::to_string(k) + ", centre " + std::to_string(centre);
      const auto x = uniform(rng, static_cast<size_t>(rows * k), centre - 2.f, centre + 2.f);
      const auto scale = uniform(rng, static_cast<size_t>(k), 0.5f, 1.5f);
      const auto offset = uniform(rng, static_cast<size_t>(k), -1.f, 1.f);
      const auto dy = uniform(rng, static_cast<size_t>(rows * k), -1.f, 1.f);
      const Forward f = kernel_forward(x, rows, k, scale, offset);
      std::vector<double> y, mean, inv_std;
      reference_forward(widen(x), rows, k, widen(scale), widen(offset), y, mean, inv_std);
      expect_close(f.y, y, 1e-6, what + " y");
      expect_close(f.mean, mean, 1e-7, what + " mean");
      expect_close(f.inv_std, inv_std, 1e-7, what + " inv_std");

      // The gradient's formulas in double, from the forward's float outputs.
      const Backward b = kernel_backward(dy, x, rows, k, scale, f.mean, f.inv_std);
      std::vector<double> dx(x.size()), ds(k, 0.0), db(k, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        const double m = f.mean[r], s = f.inv_std[r];
        double mg = 0.0, mgx = 0.0;
        for (int64_t j = 0; j < k; ++j) {
          const double xh = (x[r * k + j] - m) * s;
          mg += double(dy[r * k + j]) * scale[j] / double(k);
          mgx += double(dy[r * k + j]) * scale[j] * xh / double(k);
          ds[j] += dy[r * k + j] * xh;
          db[j] += dy[r * k + j];
        }
        for (int64_t j = 0; j < k; ++j)
          dx[r * k + j] = s * (double(dy[r * k + j]) * scale[j] - mg - (x[r * k + j] - m) * s * mgx);
      }
      expect_close(b.dx, dx, 1e-6, what + " dx");
      expect_close(b.scale_backprop, ds, 1e-6, what + " scale_backprop");
      expect_close(b.offset_backprop, db, 1e-6, what + " offset_backprop");
    }
}

TEST_CASE("layer normalization's gradient is the forward's derivative (central differences)", "[cuda][layer_norm]") {
  std::mt19937 rng(11);
  const int64_t rows = 4, k = 37;
  const auto x = uniform(rng, static_cast<size_t>(rows * k), -2.f, 2.f);
  const auto scale = uniform(rng, static_cast<size_t>(k), 0.5f, 1.5f);
  const auto offset = uniform(rng, static_cast<size_t>(k), -1.f, 1.f);
  const auto dy = uniform(rng, static_cast<size_t>(rows * k), -1.f, 1.f);
  const Forward f = kernel_forward(x, rows, k, scale, offset);
  const Backward b = kernel_backward(dy, x, rows, k, scale, f.mean, f.inv_std);
  const double h = 1e-4;
  std::vector<double> dx(x.size()), ds(k), db(k);
  auto d_x = [&](size_t i) {
    auto xs = widen(x);
    const double v = xs[i];
    xs[i] = v + h;
    const double up = loss(xs, rows, k, widen(scale), widen(offset), dy);
    xs[i] = v - h;
    return (up - loss(xs, rows, k, widen(scale), widen(offset), dy)) / (2 * h);
  };
  auto d_scale = [&](size_t j) {
    auto sc = widen(scale);
    const double v = sc[j];
    sc[j] = v + h;
    const double up = loss(widen(x), rows, k, sc, widen(offset), dy);
    sc[j] = v - h;
    return (up - loss(widen(x), rows, k, sc, widen(offset), dy)) / (2 * h);
  };
  auto d_offset = [&](size_t j) {
    auto of = widen(offset);
    const double v = of[j];
    of[j] = v + h;
    const double up = loss(widen(x), rows, k, widen(scale), of, dy);
    of[j] = v - h;
    return (up - loss(widen(x), rows, k, widen(scale), of, dy)) / (2 * h);
  };
  for (size_t i = 0; i < x.size(); ++i) dx[i] = d_x(i);
  for (size_t j = 0; j < static_cast<size_t>(k); ++j) ds[j] = d_scale(j), db[j] = d_offset(j);
  expect_close(b.dx, dx, 1e-5, "dx");
  expect_close(b.scale_backprop, ds, 1e-5, "scale_backprop");
  expect_close(b.offset_backprop, db, 1e-5, "offset_backprop");
}

TEST_CASE("layer normalization over no rows: nothing to launch, zero scale and offset gradients",
          "[cuda][layer_norm]") {
  CHECK(layer_norm_rows(0, 7).grid == 0);
  CHECK(layer_norm_chunks(0) == 1);
  CHECK(layer_norm_rows_per_chunk(0) == 0);
  const Backward b = kernel_backward({}, {}, 0, 3, {1.f, 2.f, 3.f}, {}, {});
  CHECK(b.scale_backprop == std::vector<float>{0.f, 0.f, 0.f});
  CHECK(b.offset_backprop == std::vector<float>{0.f, 0.f, 0.f});
}

TEST_CASE("layer normalization's row groups: sized by k alone, every row reached once", "[cuda][layer_norm]") {
  for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{128}, int64_t{129}, int64_t{256}, int64_t{257}, int64_t{512},
                    int64_t{513}, int64_t{100000}}) {
    const int want = k <= 128 ? 32 : k <= 256 ? 64 : k <= 512 ? 128 : 256;
    for (int64_t rows : {int64_t{1}, int64_t{1000}, int64_t{5000000000}}) {
      INFO("k " << k << ", rows " << rows);
      const LayerNormRows g = layer_norm_rows(rows, k);
      CHECK(g.row_threads == want);
      CHECK(g.row_threads * g.rows_per_block == axon::cuda::kLayerNormThreads);
      CHECK(g.grid >= 1);
      CHECK(g.grid <= axon::cuda::kMaxGridStrideBlocks);
      CHECK(g.row_blocks * g.rows_per_block >= rows);
      CHECK((g.row_blocks - 1) * g.rows_per_block < rows);
    }
  }
  // Beyond the grid's cap, blocks stride over row blocks: each row once.
  for (int64_t rows : {int64_t{1}, int64_t{9}, int64_t{1000}, axon::cuda::kMaxGridStrideBlocks * 8 + 5}) {
    INFO("rows " << rows);
    const LayerNormRows g = layer_norm_rows(rows, 1);
    std::vector<uint8_t> seen(static_cast<size_t>(rows), 0);
    int64_t wrong = 0;
    for (int64_t b = 0; b < g.grid; ++b)
      for (int64_t rb = b; rb < g.row_blocks; rb += g.grid)
        for (int64_t grp = 0; grp < g.rows_per_block; ++grp) {
          const int64_t row = rb * g.rows_per_block + grp;
          if (row < rows) wrong += seen[static_cast<size_t>(row)]++ != 0;
        }
    for (uint8_t v : seen) wrong += v != 1;
    CHECK(wrong == 0);
  }
}

TEST_CASE("layer normalization's column sums: every row in one chunk, grid.y at most 64", "[cuda][layer_norm]") {
  for (int64_t rows : {int64_t{1}, int64_t{5}, int64_t{256}, int64_t{257}, int64_t{16384}, int64_t{16385},
                       int64_t{1000003}, int64_t{5000000000}}) {
    INFO("rows " << rows);
    const int64_t chunks = layer_norm_chunks(rows), per = layer_norm_rows_per_chunk(rows);
    CHECK(chunks >= 1);
    CHECK(chunks <= axon::cuda::kLayerNormMaxChunks);
    // Chunk ch takes rows [ch * per, min(rows, (ch + 1) * per)): together all of them, once.
    CHECK(chunks * per >= rows);
    CHECK((chunks - 1) * per < rows);
  }
  for (int64_t k : {int64_t{1}, int64_t{32}, int64_t{33}, int64_t{4096}}) {
    INFO("k " << k);
    CHECK(axon::cuda::layer_norm_column_tiles(k) * axon::cuda::kLayerNormTile >= k);
    CHECK((axon::cuda::layer_norm_column_tiles(k) - 1) * axon::cuda::kLayerNormTile < k);
    CHECK(axon::cuda::layer_norm_partial_bytes(1000, k) == layer_norm_chunks(1000) * k * 16);
  }
}
