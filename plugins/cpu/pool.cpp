// MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad over NHWC: the channel loop
// is innermost and contiguous, so it vectorises; windows are clipped to the
// image once per output pixel instead of testing every tap.
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace axon::cpu {
namespace {

// Below this many elements an op runs on the calling thread; work is cut in
// chunks of about kChunkElements.
constexpr int64_t kSerialElements = 1 << 15;
constexpr int64_t kChunkElements = 1 << 14;

struct Window {
  int64_t h0, h1, w0, w1;  // clipped input rows [h0, h1), columns [w0, w1)
};

Window window(const PoolGeometry& p, int64_t oh, int64_t ow) {
  const int64_t h = oh * p.sh - p.pad_h, w = ow * p.sw - p.pad_w;
  return {std::max<int64_t>(h, 0), std::min(h + p.kh, p.h), std::max<int64_t>(w, 0), std::min(w + p.kw, p.w)};
}

// f(image, window, at) for each output pixel of rows [r0, r1) (row = n *
// p.oh + oh): image is the pixel's image in x, at its offset in y.
template <class F>
__attribute__((always_inline)) inline void for_each_window(const PoolGeometry& p, const float* x, int64_t r0,
                                                           int64_t r1, F&& f) {
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t n = row / p.oh, oh = row % p.oh;
    const float* image = x + n * p.h * p.w * p.c;
    for (int64_t ow = 0; ow < p.ow; ++ow) f(image, window(p, oh, ow), (row * p.ow + ow) * p.c);
  }
}

// Output rows [r0, r1) (row = n * p.oh + oh) of MaxPool: a block of
// channels at a time in registers across the window's taps; from the first
// tap, a value is kept only when strictly larger (the first maximum wins,
// NaN in the first tap stays, as in the reference).
template <int W>
__attribute__((always_inline)) inline void max_pool_rows_body(const PoolGeometry& p, const float* x, float* y,
                                                               int64_t r0, int64_t r1) {
  const int64_t ch = p.c;
  for_each_window(p, x, r0, r1, [&](const float* image, const Window& win, int64_t at) __attribute__((always_inline)) {
    const float* first = image + (win.h0 * p.w + win.w0) * ch;
    simd::for_channel_blocks<W>(ch, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
      using V = decltype(lanes);
      V best = simd::load<V>(first + c0);
      for (int64_t ih = win.h0; ih < win.h1; ++ih)
        for (int64_t iw = win.w0; iw < win.w1; ++iw) {
          const V v = simd::load<V>(image + (ih * p.w + iw) * ch + c0);
          best = v > best ? v : best;
        }
      simd::store<V>(y + at + c0, best);
    });
  });
}

AXON_CPU_DISPATCH(max_pool_rows, (const PoolGeometry& p, const float* x, float* y, int64_t r0, int64_t r1),
                  (p, x, y, r0, r1))

// Taps of each output column's window clipped into the image:
// taps[o * k + j] = the window's j-th column (row) clamped to its first or
// last one inside. A clamped tap repeats its neighbour right before or
// after it, which a first-maximum scan ignores (a tap never beats itself),
// so every window folds exactly k taps.
void clamped_taps(int64_t out, int64_t k, int64_t s, int64_t pad, int64_t in, int32_t* taps) {
  for (int64_t o = 0; o < out; ++o)
    for (int64_t j = 0; j < k; ++j)
      taps[o * k + j] = static_cast<int32_t>(std::clamp(o * s - pad + j, std::max<int64_t>(o * s - pad, 0),
                                                        std::min(o * s - pad + k, in) - 1));
}

// out[i] = the first maximum over j of src[j][i], j in [0, k), for i in [0,
// n): W lanes at a time, then single floats (one `v > best ? v : best`, as
// max_pool_rows takes each tap).
template <int W, int K>
__attribute__((always_inline)) inline void max_over(const float* const* src, int64_t k, float* out, int64_t n) {
  using F = typename simd::Vec<W>::f;
  if constexpr (K > 0) k = K;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    F best = simd::load<F>(src[0] + i);
#pragma GCC unroll 4
    for (int64_t j = 1; j < k; ++j) {
      const F v = simd::load<F>(src[j] + i);
      best = v > best ? v : best;
    }
    simd::store<F>(out + i, best);
  }
  for (; i < n; ++i) {
    float best = src[0][i];
    for (int64_t j = 1; j < k; ++j) best = src[j][i] > best ? src[j][i] : best;
    out[i] = best;
  }
}

// Whether any of p[0 .. n) is NaN: W lanes at a time, reduced once.
template <int W>
__attribute__((always_inline)) inline bool has_nan(const float* p, int64_t n) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  I seen{};
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F v = simd::load<F>(p + i);
    seen |= v != v;
  }
  bool any = false;
  for (int l = 0; l < W; ++l) any = any || seen[l] != 0;
  for (; i < n; ++i) any = any || p[i] != p[i];
  return any;
}

// Output rows [r0, r1) of MaxPool where windows slide along the rows
// (stride 1) and overlap down them (the Inception branch's 3x3 stride 1),
// separably: each input row's maximum under each output column's window
// (a stream along the row, whose windows are the row shifted by one pixel
// per tap, and clamped taps at the edges) into `row_max`, a ring of kh rows,
// then each output row the maximum of its windows' rows (clamped rows:
// every output row folds kh of them). It keeps max_pool_rows' first
// maximum in row-major order, hence its bits, unless a row's maximum is NaN
// (its first tap is): the scan would look past that NaN at the row's other
// taps. *exact is false then, and the caller runs max_pool_rows instead.
template <int W, int K>
__attribute__((always_inline)) inline void max_pool_sliding_rows_k(const PoolGeometry& p, const float* x, float* y,
                                                                    const int32_t* row_taps, const int32_t* col_taps,
                                                                    float* row_max, int64_t r0, int64_t r1,
                                                                    bool* exact) {
  const int64_t ch = p.c, kh = p.kh, kw = p.kw, row_floats = p.ow * ch;
  // Output columns [lo, hi) have every tap inside the image.
  const int64_t lo = std::min(p.ow, p.pad_w), hi = std::max(lo, std::min(p.ow, p.w - kw + 1 + p.pad_w));
  const float* src[16];
  bool nan_row = false;
  for (int64_t row = r0; row < r1;) {
    const int64_t n = row / p.oh, oh0 = row % p.oh, oh1 = std::min(p.oh, oh0 + (r1 - row));
    const float* image = x + n * p.h * p.w * ch;
    // Input rows enter a ring of kh slots as the windows reach them.
    int64_t next = row_taps[oh0 * kh];
    for (int64_t oh = oh0; oh < oh1; ++oh) {
      for (; next <= row_taps[oh * kh + kh - 1]; ++next) {
        const float* in = image + next * p.w * ch;
        float* out = row_max + next % kh * row_floats;
        auto edge = [&](int64_t ow) __attribute__((always_inline)) {
          for (int64_t j = 0; j < kw; ++j) src[j] = in + col_taps[ow * kw + j] * ch;
          max_over<W, K>(src, kw, out + ow * ch, ch);
        };
        for (int64_t ow = 0; ow < lo; ++ow) edge(ow);
        if (hi > lo) {
          for (int64_t j = 0; j < kw; ++j) src[j] = in + (lo - p.pad_w + j) * ch;
          max_over<W, K>(src, kw, out + lo * ch, (hi - lo) * ch);
        }
        for (int64_t ow = hi; ow < p.ow; ++ow) edge(ow);
        nan_row = nan_row || has_nan<W>(out, row_floats);
      }
      for (int64_t i = 0; i < kh; ++i) src[i] = row_max + row_taps[oh * kh + i] % kh * row_floats;
      max_over<W, K>(src, kh, y + (n * p.oh + oh) * row_floats, row_floats);
    }
    row += oh1 - oh0;
  }
  *exact = !nan_row;
}

template <int W>
__attribute__((always_inline)) inline void max_pool_sliding_rows_body(const PoolGeometry& p, const float* x, float* y,
                                                                       const int32_t* row_taps,
                                                                       const int32_t* col_taps, float* row_max,
                                                                       int64_t r0, int64_t r1, bool* exact) {
  if (p.kh == 3 && p.kw == 3)
    return max_pool_sliding_rows_k<W, 3>(p, x, y, row_taps, col_taps, row_max, r0, r1, exact);
  max_pool_sliding_rows_k<W, 0>(p, x, y, row_taps, col_taps, row_max, r0, r1, exact);
}

AXON_CPU_DISPATCH(max_pool_sliding_rows,
                  (const PoolGeometry& p, const float* x, float* y, const int32_t* row_taps, const int32_t* col_taps,
                   float* row_max, int64_t r0, int64_t r1, bool* exact),
                  (p, x, y, row_taps, col_taps, row_max, r0, r1, exact))

void max_pool(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  // The separable form wants windows that overlap down the rows and slide
  // along them (max_pool_sliding_rows; up to 16 taps a side), and rows of at
  // most 4096 floats: its ring of rows near L1 (3x3 SAME on two threads:
  // 64 images of 26x26x16 178 -> 80 us, 32 of 56x56x64 2.10 -> 1.78 ms; but
  // 8 of 112x112x64, rows of 28 KiB, 1.78 -> 1.96 ms).
  const bool overlapping = p.sh < p.kh && p.sw == 1 && p.kh <= 16 && p.kw <= 16 && p.ow * p.c <= 4096;
  // Chunks of whole output rows (n, oh); at least 8 where each chunk's
  // first window computes its rows' maxima anew (a 224x224x64 image gave
  // chunks of one row, and the separable form ran slower than the scan).
  const int64_t rows = std::max<int64_t>(overlapping ? 8 : 1, kChunkElements / std::max<int64_t>(1, p.ow * p.c));
  std::vector<int32_t> row_taps, col_taps;
  if (overlapping) {
    row_taps.resize(static_cast<size_t>(p.oh * p.kh));
    col_taps.resize(static_cast<size_t>(p.ow * p.kw));
    clamped_taps(p.oh, p.kh, p.sh, p.pad_h, p.h, row_taps.data());
    clamped_taps(p.ow, p.kw, p.sw, p.pad_w, p.w, col_taps.data());
  }
  d.pool().for_ranges(p.n * p.oh, rows, y.numel() >= kSerialElements, [&](int t, int64_t b, int64_t e) {
    if (overlapping) {
      float* row_max = d.scratch(t, static_cast<size_t>(p.kh * p.ow * p.c));
      bool exact = false;
      max_pool_sliding_rows(p, x.data<float>(), y.data<float>(), row_taps.data(), col_taps.data(), row_max, b, e,
                            &exact);
      if (exact) return;
    }
    max_pool_rows(p, x.data<float>(), y.data<float>(), b, e);
  });
}

// int32 lanes of a float vector V (a comparison's result), int32_t for one float.
template <class V>
using IntLanes = std::conditional_t<std::is_same_v<V, float>, int32_t, decltype(V{} > V{})>;

// One image of MaxPoolGrad. For each window and each channel, the first
// maximum in row-major tap order takes the window's gradient: a scan with
// `v > best` (strict, so earlier taps win ties), a block of channels at a
// time with selects, then every tap gets `gradient where it won, else 0`
// (stored when the windows tile the image, added otherwise).
template <int W>
__attribute__((always_inline)) inline void max_pool_grad_image_body(const PoolGeometry& p, const float* image,
                                                                     const float* dy, float* grad, bool tiles) {
  const int64_t ch = p.c;
  auto tap = [&](int64_t ih, int64_t iw) { return (ih * p.w + iw) * ch; };
  for (int64_t oh = 0; oh < p.oh; ++oh)
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      const Window win = window(p, oh, ow);
      const float* g = dy + (oh * p.ow + ow) * ch;
      simd::for_channel_blocks<W>(ch, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
        using V = decltype(lanes);
        using I = IntLanes<V>;
        V best = simd::load<V>(image + tap(win.h0, win.w0) + c0);
        I won = I{};
        int32_t t = 0;
        for (int64_t ih = win.h0; ih < win.h1; ++ih)
          for (int64_t iw = win.w0; iw < win.w1; ++iw, ++t) {
            const V v = simd::load<V>(image + tap(ih, iw) + c0);
            const auto more = v > best;
            best = more ? v : best;
            won = more ? I{} + t : won;
          }
        const V gv = simd::load<V>(g + c0);
        t = 0;
        for (int64_t ih = win.h0; ih < win.h1; ++ih)
          for (int64_t iw = win.w0; iw < win.w1; ++iw, ++t) {
            float* out = grad + tap(ih, iw) + c0;
            const V mine = won == t ? gv : V{};
            simd::store<V>(out, tiles ? mine : simd::load<V>(out) + mine);
          }
      });
    }
}

AXON_CPU_DISPATCH(max_pool_grad_image,
                  (const PoolGeometry& p, const float* image, const float* dy, float* grad, bool tiles),
                  (p, image, dy, grad, tiles))

// One image of MaxPoolGrad for 3x3 windows at stride 1 (overlapping: each
// pixel is in up to nine windows), channels [c0, c0 + lanes of V); taps_won:
// each window's winning tap (argmax_3x3), or nullptr to scan for it. Along
// an output row the windows slide one column at a time, so the gradients
// for the 3x3 pixels under the current window stay in registers and a
// column of three is added into dx when the window leaves it: three
// read-modify-writes per window instead of nine. Each dx element gets, per
// output row, the sum of its windows' gradients in window order added to
// it, rows in order; the first output row to reach it (the first, or the
// window's bottom row) stores its sum instead, so dx needs no clearing (a
// sum from +0 is never -0, so this stores the bits 0 + sum would). V is a
// vector of floats (I its int32 lanes) or one float (I int32_t), in the same
// order: the same bits on every instruction set and thread count.
template <class V, class I>
__attribute__((always_inline)) inline void max_pool_grad_3x3_lanes(const PoolGeometry& p, const float* image,
                                                                    const float* dy, const int32_t* taps_won,
                                                                    float* grad, int64_t c0) {
  const int64_t ch = p.c;
  auto at = [&](int64_t ih, int64_t iw) { return (ih * p.w + iw) * ch + c0; };
  for (int64_t oh = 0; oh < p.oh; ++oh) {
    const int64_t top = oh - p.pad_h;
    // dx's rows under the windows (nullptr outside the image).
    float* rows[3];
    for (int i = 0; i < 3; ++i) rows[i] = top + i >= 0 && top + i < p.h ? grad + at(top + i, 0) : nullptr;
    const bool first[3] = {oh == 0, oh == 0, true};
    V acc[3][3] = {};
    // The column iw leaves the windows: its three sums go into dx.
    auto flush = [&](int64_t iw, int j) {
      if (iw < 0 || iw >= p.w) return;
      for (int i = 0; i < 3; ++i) {
        if (rows[i] == nullptr) continue;
        float* out = rows[i] + iw * ch;
        simd::store<V>(out, first[i] ? acc[i][j] : simd::load<V>(out) + acc[i][j]);
      }
    };
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      const int64_t left = ow - p.pad_w;
      I won;
      if (taps_won != nullptr) {
        std::memcpy(&won, taps_won + (oh * p.ow + ow) * ch + c0, sizeof won);
      } else {
        const Window win = window(p, oh, ow);
        V best = simd::load<V>(image + at(win.h0, win.w0));
        won = I{} + int32_t((win.h0 - top) * 3 + (win.w0 - left));
        for (int64_t ih = win.h0; ih < win.h1; ++ih)
          for (int64_t iw = win.w0; iw < win.w1; ++iw) {
            const V v = simd::load<V>(image + at(ih, iw));
            const auto more = v > best;
            best = more ? v : best;
            won = more ? I{} + int32_t((ih - top) * 3 + (iw - left)) : won;
          }
      }
      const V g = simd::load<V>(dy + (oh * p.ow + ow) * ch + c0);
      // Added where the tap won, kept elsewhere (the bits of + 0: no sum is -0).
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) acc[i][j] = won == i * 3 + j ? acc[i][j] + g : acc[i][j];
      flush(left, 0);
      for (int i = 0; i < 3; ++i) acc[i][0] = acc[i][1], acc[i][1] = acc[i][2], acc[i][2] = V{};
    }
    const int64_t after = p.ow - p.pad_w;  // the first column no window of this row has left
    flush(after, 0);
    flush(after + 1, 1);
  }
}

// For one image of a sliding 3x3 pooling, taps_won[(oh * ow + ow') * c +
// ci] = each window's first maximum as max_pool_grad_3x3_lanes numbers it,
// (row - top) * 3 + (column - left), found as max_pool_sliding_rows finds
// the maximum: per input row the first maximum under each output column's
// window and its column (`row_max`, `row_won`), then per output the first
// of its rows' maxima. *exact is false, leaving the scan to decide, where a
// row's maximum is NaN (as there).
template <int W>
__attribute__((always_inline)) inline void argmax_3x3_body(const PoolGeometry& p, const float* image,
                                                            const int32_t* row_taps, const int32_t* col_taps,
                                                            float* row_max, int32_t* row_won, int32_t* taps_won,
                                                            bool* exact) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  constexpr int K = 3;
  const int64_t ch = p.c, row_floats = p.ow * ch;
  const int64_t lo = std::min(p.ow, p.pad_w), hi = std::max(lo, std::min(p.ow, p.w - K + 1 + p.pad_w));
  // out[i], won[i] = the first maximum of src[j][i] over j and add[j] + (from
  // == nullptr ? 0 : from[j][i]) of the j that holds it, for i in [0, n).
  // Rows (from == nullptr: the indices are add[j] alone) write out and won;
  // outputs (from given) only won.
  auto fold = [&](auto rows, const float* const* src, const int32_t* const* from, const int32_t* add, float* out,
                  int32_t* won, int64_t n) __attribute__((always_inline)) {
    constexpr bool kRows = decltype(rows)::value;
    I adds[K];
    for (int j = 0; j < K; ++j) adds[j] = simd::splat<I>(add[j]);
    auto index = [&](int j, int64_t i) __attribute__((always_inline)) {
      if constexpr (kRows) return adds[j];
      I t;
      std::memcpy(&t, from[j] + i, sizeof t);
      return t + adds[j];
    };
    int64_t i = 0;
    for (; i + W <= n; i += W) {
      F best = simd::load<F>(src[0] + i);
      I at = index(0, i);
#pragma GCC unroll 3
      for (int j = 1; j < K; ++j) {
        const F v = simd::load<F>(src[j] + i);
        const auto more = v > best;
        best = more ? v : best;
        at = more ? index(j, i) : at;
      }
      if constexpr (kRows) simd::store<F>(out + i, best);
      std::memcpy(won + i, &at, sizeof at);
    }
    for (; i < n; ++i) {
      float best = src[0][i];
      int32_t at = add[0] + (kRows ? 0 : from[0][i]);
      for (int j = 1; j < K; ++j)
        if (src[j][i] > best) best = src[j][i], at = add[j] + (kRows ? 0 : from[j][i]);
      if constexpr (kRows) out[i] = best;
      won[i] = at;
    }
  };
  const float* src[K];
  const int32_t* from[K];
  int32_t add[K];
  for (int64_t ih = 0; ih < p.h; ++ih) {
    const float* in = image + ih * p.w * ch;
    float* out = row_max + ih * row_floats;
    int32_t* won = row_won + ih * row_floats;
    auto edge = [&](int64_t ow) __attribute__((always_inline)) {
      for (int j = 0; j < K; ++j) {
        src[j] = in + col_taps[ow * K + j] * ch;
        add[j] = static_cast<int32_t>(col_taps[ow * K + j] - (ow - p.pad_w));
      }
      fold(std::true_type{}, src, nullptr, add, out + ow * ch, won + ow * ch, ch);
    };
    for (int64_t ow = 0; ow < lo; ++ow) edge(ow);
    if (hi > lo) {
      for (int j = 0; j < K; ++j) src[j] = in + (lo - p.pad_w + j) * ch, add[j] = j;
      fold(std::true_type{}, src, nullptr, add, out + lo * ch, won + lo * ch, (hi - lo) * ch);
    }
    for (int64_t ow = hi; ow < p.ow; ++ow) edge(ow);
  }
  *exact = !has_nan<W>(row_max, p.h * row_floats);
  if (!*exact) return;
  for (int64_t oh = 0; oh < p.oh; ++oh) {
    for (int i = 0; i < K; ++i) {
      const int64_t ih = row_taps[oh * K + i];
      src[i] = row_max + ih * row_floats;
      from[i] = row_won + ih * row_floats;
      add[i] = static_cast<int32_t>((ih - (oh - p.pad_h)) * K);
    }
    fold(std::false_type{}, src, from, add, nullptr, taps_won + oh * row_floats, row_floats);
  }
}

AXON_CPU_DISPATCH(argmax_3x3,
                  (const PoolGeometry& p, const float* image, const int32_t* row_taps, const int32_t* col_taps,
                   float* row_max, int32_t* row_won, int32_t* taps_won, bool* exact),
                  (p, image, row_taps, col_taps, row_max, row_won, taps_won, exact))

template <int W>
__attribute__((always_inline)) inline void max_pool_grad_3x3_image_body(const PoolGeometry& p, const float* image,
                                                                         const float* dy, const int32_t* taps_won,
                                                                         float* grad) {
  simd::for_channel_blocks<W>(p.c, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
    using V = decltype(lanes);
    max_pool_grad_3x3_lanes<V, IntLanes<V>>(p, image, dy, taps_won, grad, c0);
  });
}

AXON_CPU_DISPATCH(max_pool_grad_3x3_image,
                  (const PoolGeometry& p, const float* image, const float* dy, const int32_t* taps_won, float* grad),
                  (p, image, dy, taps_won, grad))

// Each window's gradient goes to its first maximum. Windows may overlap, so
// threads own whole images and scatter into them alone.
void max_pool_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(2), dx = c.output(0);
  const PoolGeometry p = pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  float* dxp = dx.data<float>();
  const int64_t ch = p.c, image_size = p.h * p.w * ch;
  AXON_CHECK(image_size < (int64_t{1} << 31), "%s: x %s: the CPU plugin takes images of fewer than 2^31 elements",
             c.op(), x.shape_string().c_str());
  // When the windows tile the image exactly, each window writes its own
  // pixels (no clearing pass, no read-modify-write); the sliding 3x3 path
  // stores each element's first sum; otherwise dx is cleared first and
  // windows add into it.
  const bool tiles = p.sh == p.kh && p.sw == p.kw && p.pad_h == 0 && p.pad_w == 0 && p.oh * p.kh == p.h &&
                     p.ow * p.kw == p.w;
  const bool sliding_3x3 = p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1;
  // The separable argmax takes an image's rows twice over and its outputs
  // once in a thread's scratch: up to 16 MiB (a 224x224 image of 64
  // channels needs 38), else the sliding pass scans each window.
  const int64_t argmax_floats = (2 * p.h + p.oh) * p.ow * ch;
  const bool separable = sliding_3x3 && argmax_floats <= (int64_t{1} << 22);
  std::vector<int32_t> row_taps, col_taps;
  if (separable) {
    row_taps.resize(static_cast<size_t>(p.oh * 3));
    col_taps.resize(static_cast<size_t>(p.ow * 3));
    clamped_taps(p.oh, 3, 1, p.pad_h, p.h, row_taps.data());
    clamped_taps(p.ow, 3, 1, p.pad_w, p.w, col_taps.data());
  }
  const int64_t images = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, image_size));
  d.pool().for_ranges(p.n, images, dx.numel() >= kSerialElements, [&](int t, int64_t n0, int64_t n1) {
    if (!tiles && !sliding_3x3)
      std::memset(dxp + n0 * image_size, 0, sizeof(float) * static_cast<size_t>((n1 - n0) * image_size));
    // The argmax pass's rows (maxima and their columns) and its windows' taps, in 32-bit lanes.
    float* row_max = nullptr;
    int32_t *row_won = nullptr, *taps_won = nullptr;
    if (separable) {
      const int64_t row_floats = p.ow * ch;
      row_max = d.scratch(t, static_cast<size_t>(argmax_floats));
      row_won = reinterpret_cast<int32_t*>(row_max + p.h * row_floats);
      taps_won = row_won + p.h * row_floats;
    }
    for (int64_t n = n0; n < n1; ++n) {
      const float* image = xp + n * image_size;
      const float* g = dyp + n * p.oh * p.ow * ch;
      if (!sliding_3x3) {
        max_pool_grad_image(p, image, g, dxp + n * image_size, tiles);
        continue;
      }
      bool exact = false;
      if (separable) argmax_3x3(p, image, row_taps.data(), col_taps.data(), row_max, row_won, taps_won, &exact);
      max_pool_grad_3x3_image(p, image, g, exact ? taps_won : nullptr, dxp + n * image_size);
    }
  });
}

// ------------------------------------------------------------------ average pooling
// Sums in double, channels in the vector lanes and taps in row-major order:
// every element gets the same sum whatever the instruction set (the lanes
// never mix) or the thread count (each element is one thread's). So AvgPool
// equals the reference's double sums, divided by the window's real taps
// (TensorFlow's SAME averages over those only).

// out[0 .. n) = float(sum of the W-lane double vectors lo, hi / divisor).
template <int W>
__attribute__((always_inline)) inline void store_quotient(float* out, const simd::DoubleSum<W>& s, double divisor) {
  using Half = typename simd::Vec<W / 2>::f;
  const Half lo = __builtin_convertvector(s.lo / divisor, Half), hi = __builtin_convertvector(s.hi / divisor, Half);
  std::memcpy(out, &lo, sizeof lo);
  std::memcpy(out + W / 2, &hi, sizeof hi);
}

// Output rows [r0, r1) (row = n * p.oh + oh) of AvgPool.
template <int W>
__attribute__((always_inline)) inline void avg_pool_rows_body(const PoolGeometry& p, const float* x, float* y,
                                                               int64_t r0, int64_t r1) {
  using F = typename simd::Vec<W>::f;
  const int64_t ch = p.c, vec_end = ch / W * W;
  for_each_window(p, x, r0, r1, [&](const float* image, const Window& win, int64_t at) __attribute__((always_inline)) {
    const double taps = double((win.h1 - win.h0) * (win.w1 - win.w0));
    float* out = y + at;
    for (int64_t c0 = 0; c0 < vec_end; c0 += W) {
      simd::DoubleSum<W> s;
      for (int64_t ih = win.h0; ih < win.h1; ++ih)
        for (int64_t iw = win.w0; iw < win.w1; ++iw) s.add(simd::load<F>(image + (ih * p.w + iw) * ch + c0));
      store_quotient<W>(out + c0, s, taps);
    }
    for (int64_t c = vec_end; c < ch; ++c) {
      double s = 0.0;
      for (int64_t ih = win.h0; ih < win.h1; ++ih)
        for (int64_t iw = win.w0; iw < win.w1; ++iw) s += image[(ih * p.w + iw) * ch + c];
      out[c] = static_cast<float>(s / taps);
    }
  });
}

AXON_CPU_DISPATCH(avg_pool_rows, (const PoolGeometry& p, const float* x, float* y, int64_t r0, int64_t r1),
                  (p, x, y, r0, r1))

void avg_pool(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  // Chunks of output rows of about kChunkElements inputs read.
  const int64_t row_reads = std::max<int64_t>(1, p.ow * p.kh * p.kw * p.c);
  const int64_t rows = std::max<int64_t>(1, kChunkElements / row_reads);
  d.pool().for_ranges(p.n * p.oh, rows, y.numel() * p.kh * p.kw >= kSerialElements,
                      [&](int, int64_t b, int64_t e) { avg_pool_rows(p, x.data<float>(), y.data<float>(), b, e); });
}

// The outputs whose window covers input index i along an axis: [lo, hi].
inline void covering(int64_t i, int64_t pad, int64_t k, int64_t s, int64_t out, int64_t& lo, int64_t& hi) {
  const int64_t first = i + pad - k + 1;  // the earliest window start that still reaches i
  lo = first <= 0 ? 0 : (first + s - 1) / s;
  hi = std::min((i + pad) / s, out - 1);
}

// Input rows [r0, r1) (row = n * p.h + ih) of AvgPoolGrad, gathered: each
// element sums, in double and in row-major order of the windows covering it,
// dy times 1 / (that window's real taps) (`inverse`, one per output pixel).
// columns[2 iw], columns[2 iw + 1]: the outputs covering column iw, found
// once per call rather than with two divisions per pixel (2x2 windows at
// 28x28x16, batch 64: 241 -> 216 us).
template <int W>
__attribute__((always_inline)) inline void avg_pool_grad_rows_body(const PoolGeometry& p, const float* dy,
                                                                    const double* inverse, const int64_t* columns,
                                                                    float* dx, int64_t r0, int64_t r1) {
  using F = typename simd::Vec<W>::f;
  using Half = typename simd::Vec<W / 2>::f;
  using D = typename simd::DoubleVec<W / 2>::d;
  const int64_t ch = p.c, vec_end = ch / W * W;
  // A pixel covered by the same windows as the one before it gets its values
  // (a global pooling's whole image, each pair of a 2x2 pooling's pixels):
  // copied from there, the same bits without the sums.
  auto copy = [&](const float* from, float* to, int64_t floats) __attribute__((always_inline)) {
    int64_t i = 0;
    for (; i + W <= floats; i += W) simd::store<F>(to + i, simd::load<F>(from + i));
    for (; i < floats; ++i) to[i] = from[i];
  };
  int64_t last_oh0 = -1, last_oh1 = -1;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t n = row / p.h, ih = row % p.h;
    int64_t oh0, oh1;
    covering(ih, p.pad_h, p.kh, p.sh, p.oh, oh0, oh1);
    const bool same_rows = row > r0 && ih > 0 && oh0 == last_oh0 && oh1 == last_oh1;
    last_oh0 = oh0, last_oh1 = oh1;
    if (same_rows) {
      copy(dx + (row - 1) * p.w * ch, dx + row * p.w * ch, p.w * ch);
      continue;
    }
    const float* g = dy + n * p.oh * p.ow * ch;
    for (int64_t iw = 0; iw < p.w; ++iw) {
      const int64_t ow0 = columns[2 * iw], ow1 = columns[2 * iw + 1];
      float* out = dx + (row * p.w + iw) * ch;
      if (iw > 0 && ow0 == columns[2 * iw - 2] && ow1 == columns[2 * iw - 1]) {
        copy(out - ch, out, ch);
        continue;
      }
      for (int64_t c0 = 0; c0 < vec_end; c0 += W) {
        D lo{}, hi{};
        for (int64_t oh = oh0; oh <= oh1; ++oh)
          for (int64_t ow = ow0; ow <= ow1; ++ow) {
            const F v = simd::load<F>(g + (oh * p.ow + ow) * ch + c0);
            Half a, b;
            std::memcpy(&a, &v, sizeof a);
            std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof a, sizeof b);
            const double inv = inverse[oh * p.ow + ow];
            lo += simd::DoubleSum<W>::widen(a) * inv;
            hi += simd::DoubleSum<W>::widen(b) * inv;
          }
        const Half a = __builtin_convertvector(lo, Half), b = __builtin_convertvector(hi, Half);
        std::memcpy(out + c0, &a, sizeof a);
        std::memcpy(out + c0 + W / 2, &b, sizeof b);
      }
      for (int64_t c = vec_end; c < ch; ++c) {
        double s = 0.0;
        for (int64_t oh = oh0; oh <= oh1; ++oh)
          for (int64_t ow = ow0; ow <= ow1; ++ow) s += double(g[(oh * p.ow + ow) * ch + c]) * inverse[oh * p.ow + ow];
        out[c] = static_cast<float>(s);
      }
    }
  }
}

AXON_CPU_DISPATCH(avg_pool_grad_rows,
                  (const PoolGeometry& p, const float* dy, const double* inverse, const int64_t* columns, float* dx,
                   int64_t r0, int64_t r1),
                  (p, dy, inverse, columns, dx, r0, r1))

// Gathered rather than scattered, so threads write disjoint rows of dx and
// the overlap of windows needs no clearing pass.
void avg_pool_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), dx = c.output(0);
  const PoolGeometry p = pool_geometry(c.attrs<axon_pool_attrs>(), dx.c());
  if (dx.numel() == 0) return;
  double* inverse = d.partials_f64(static_cast<size_t>(std::max<int64_t>(1, p.oh * p.ow)));
  for (int64_t oh = 0; oh < p.oh; ++oh)
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      const Window win = window(p, oh, ow);
      inverse[oh * p.ow + ow] = 1.0 / double((win.h1 - win.h0) * (win.w1 - win.w0));
    }
  std::vector<int64_t> columns(static_cast<size_t>(2 * p.w));
  for (int64_t iw = 0; iw < p.w; ++iw) covering(iw, p.pad_w, p.kw, p.sw, p.ow, columns[2 * iw], columns[2 * iw + 1]);
  const int64_t reads_per_row = std::max<int64_t>(1, p.w * p.c * std::max<int64_t>(1, (p.kh / p.sh) * (p.kw / p.sw)));
  const int64_t rows = std::max<int64_t>(1, kChunkElements / reads_per_row);
  d.pool().for_ranges(p.n * p.h, rows, dx.numel() >= kSerialElements, [&](int, int64_t b, int64_t e) {
    avg_pool_grad_rows(p, dy.data<float>(), inverse, columns.data(), dx.data<float>(), b, e);
  });
}

}  // namespace

void add_pool_kernels(sdk::KernelTable& t) {
  add<OpId::MaxPool, max_pool>(t);
  add<OpId::MaxPoolGrad, max_pool_grad>(t);
  add<OpId::AvgPool, avg_pool>(t);
  add<OpId::AvgPoolGrad, avg_pool_grad>(t);
}

}  // namespace axon::cpu
