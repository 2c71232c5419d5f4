// The per-element arithmetic of the CUDA plugin's pooling kernels
// (plugins/cuda/kernels/pool_math.hpp), checked on the host: MaxPoolGrad
// against the op table's rule written as a scatter (each window's dy added
// at its first maximum, row-major, padding excluded), on shapes with ties,
// NaN and -inf, VALID and SAME (asymmetric) padding, overlapping and gapped
// windows; AvgPool and AvgPoolGrad against TensorFlow's outputs
// (tf_values.inc, from tf_values.py) within 2e-6 (1 + |tf|).
#include "pool_math.hpp"

#include <axon/op_geometry.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using axon::cuda::PoolShape;

namespace {

#include "tf_values.inc"

PoolShape shape_of(int64_t n, int64_t h, int64_t w, int64_t c, int k, int s, axon_padding pad) {
  axon_pool_attrs a{};
  a.struct_size = sizeof a;
  a.window_h = a.window_w = k;
  a.stride_h = a.stride_w = s;
  a.padding = pad;
  const axon::PoolGeometry g = axon::pool_geometry(a, n, h, w, c);
  return {g.n, g.h, g.w, g.c, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.pad_h, g.pad_w};
}

std::vector<float> scatter(const PoolShape& p, const std::vector<float>& x, const std::vector<float>& dy) {
  std::vector<float> dx(x.size(), 0.f);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t c = 0; c < p.c; ++c) {
          int64_t best = -1;
          for (int64_t kh = 0; kh < p.kh; ++kh)
            for (int64_t kw = 0; kw < p.kw; ++kw) {
              const int64_t ih = oh * p.sh - p.pad_h + kh, iw = ow * p.sw - p.pad_w + kw;
              if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
              const int64_t i = ((n * p.h + ih) * p.w + iw) * p.c + c;
              if (best < 0 || x[i] > x[best]) best = i;
            }
          dx[best] += dy[((n * p.oh + oh) * p.ow + ow) * p.c + c];
        }
  return dx;
}

std::vector<float> gather(const PoolShape& p, const std::vector<float>& x, const std::vector<float>& dy) {
  std::vector<int32_t> taps(static_cast<size_t>(p.n * p.oh * p.ow * p.c));
  for (size_t o = 0; o < taps.size(); ++o) taps[o] = axon::cuda::max_pool_first_max_tap(p, x.data(), o);
  std::vector<float> dx(x.size());
  for (size_t i = 0; i < dx.size(); ++i) dx[i] = axon::cuda::max_pool_grad_at(p, taps.data(), dy.data(), i);
  return dx;
}

}  // namespace

TEST_CASE("MaxPoolGrad's gather gives each window's dy to its first maximum, as the op table's scatter does") {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(0, 2), special(0, 19);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  int cases = 0;
  for (int k : {1, 2, 3, 4})
    for (int s : {1, 2, 3, 5})
      for (axon_padding pad : {AXON_PADDING_VALID, AXON_PADDING_SAME})
        for (auto [h, w] : {std::pair<int, int>{7, 9}, {8, 8}, {3, 4}, {1, 6}}) {
          const PoolShape p = shape_of(2, h, w, 3, k, s, pad);
          if (p.oh == 0 || p.ow == 0) continue;
          std::vector<float> x(static_cast<size_t>(p.n * p.h * p.w * p.c)),
              dy(static_cast<size_t>(p.n * p.oh * p.ow * p.c));
          for (float& v : x) {
            const int r = special(rng);
            v = r == 0 ? NAN : r == 1 ? -INFINITY : static_cast<float>(level(rng));  // ties everywhere
          }
          for (float& v : dy) v = u(rng);
          const std::vector<float> want = scatter(p, x, dy), got = gather(p, x, dy);
          INFO("window " << k << " stride " << s << (pad == AXON_PADDING_SAME ? " SAME " : " VALID ") << h << "x" << w);
          CHECK(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);  // same order of additions
          ++cases;
        }
  CHECK(cases > 100);
}

TEST_CASE("AvgPool averages only the taps inside x (TensorFlow's SAME), and AvgPoolGrad spreads dy back so") {
  struct Case {
    int k, s;
    axon_padding pad;
    const std::vector<float>& y;
    const std::vector<float>& dy;
    const std::vector<float>& dx;
  };
  const Case cases[] = {{3, 2, AXON_PADDING_SAME, kAvgS3s2SameY, kAvgS3s2SameDy, kAvgS3s2SameDx},
                        {2, 2, AXON_PADDING_VALID, kAvgS2s2ValidY, kAvgS2s2ValidDy, kAvgS2s2ValidDx},
                        {3, 1, AXON_PADDING_SAME, kAvgS3s1SameY, kAvgS3s1SameDy, kAvgS3s1SameDx}};
  for (const Case& c : cases) {
    const PoolShape p = shape_of(2, 7, 6, 3, c.k, c.s, c.pad);
    REQUIRE(static_cast<size_t>(p.n * p.oh * p.ow * p.c) == c.y.size());
    INFO("window " << c.k << " stride " << c.s << (c.pad == AXON_PADDING_SAME ? " SAME" : " VALID"));
    for (size_t o = 0; o < c.y.size(); ++o) {
      const float got = axon::cuda::avg_pool_at(p, kPoolX.data(), static_cast<int64_t>(o));
      INFO("y[" << o << "] " << got << ", TensorFlow " << c.y[o]);
      CHECK(std::fabs(double(got) - c.y[o]) <= 2e-6 * (1 + std::fabs(c.y[o])));
    }
    for (size_t i = 0; i < kPoolX.size(); ++i) {
      const float got = axon::cuda::avg_pool_grad_at(p, c.dy.data(), static_cast<int64_t>(i));
      INFO("dx[" << i << "] " << got << ", TensorFlow " << c.dx[i]);
      CHECK(std::fabs(double(got) - c.dx[i]) <= 2e-6 * (1 + std::fabs(c.dx[i])));
    }
  }
}

TEST_CASE("32-bit indices give the 64-bit ones' taps and values, bit for bit") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  int cases = 0;
  for (int k : {2, 3})
    for (int s : {1, 2, 3})
      for (axon_padding pad : {AXON_PADDING_VALID, AXON_PADDING_SAME}) {
        const PoolShape p = shape_of(2, 7, 9, 3, k, s, pad);
        const auto q = axon::cuda::narrow(p);
        std::vector<float> x(static_cast<size_t>(p.n * p.h * p.w * p.c));
        std::vector<float> dy(static_cast<size_t>(p.n * p.oh * p.ow * p.c));
        for (float& v : x) v = u(rng);
        for (float& v : dy) v = u(rng);
        std::vector<int32_t> taps(dy.size());
        INFO("window " << k << " stride " << s << (pad == AXON_PADDING_SAME ? " SAME" : " VALID"));
        for (size_t o = 0; o < dy.size(); ++o) {
          taps[o] = axon::cuda::max_pool_first_max_tap(p, x.data(), static_cast<int64_t>(o));
          CHECK(axon::cuda::max_pool_first_max_tap(q, x.data(), static_cast<int32_t>(o)) == taps[o]);
          const float a64 = axon::cuda::avg_pool_at(p, x.data(), static_cast<int64_t>(o));
          const float a32 = axon::cuda::avg_pool_at(q, x.data(), static_cast<int32_t>(o));
          CHECK(std::memcmp(&a64, &a32, sizeof a64) == 0);
        }
        for (size_t i = 0; i < x.size(); ++i) {
          const float m64 = axon::cuda::max_pool_grad_at(p, taps.data(), dy.data(), static_cast<int64_t>(i));
          const float m32 = axon::cuda::max_pool_grad_at(q, taps.data(), dy.data(), static_cast<int32_t>(i));
          const float g64 = axon::cuda::avg_pool_grad_at(p, dy.data(), static_cast<int64_t>(i));
          const float g32 = axon::cuda::avg_pool_grad_at(q, dy.data(), static_cast<int32_t>(i));
          CHECK(std::memcmp(&m64, &m32, sizeof m64) == 0);
          CHECK(std::memcmp(&g64, &g32, sizeof g64) == 0);
        }
        ++cases;
      }
  CHECK(cases == 12);
}
