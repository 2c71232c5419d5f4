// MaxPool, MaxPoolGrad, AvgPool and AvgPoolGrad over NHWC: the channel loop
// is innermost and contiguous, so it vectorises; windows are clipped to the
// image once per output pixel instead of testing every tap.
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

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

void max_pool(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  // Chunks of whole output rows (n, oh).
  const int64_t rows = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, p.ow * p.c));
  d.pool().for_ranges(p.n * p.oh, rows, y.numel() >= kSerialElements, [&](int, int64_t b, int64_t e) {
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
// pixel is in up to nine windows), channels [c0, c0 + lanes of V); dx starts
// cleared. Along an output row the windows slide one column at a time, so
// the gradients for the 3x3 pixels under the current window stay in
// registers and a column of three is added into dx when the window leaves
// it: three read-modify-writes per window instead of nine. Each dx element
// gets, per output row, the sum of its windows' gradients in window order
// added to it, rows in order. V is a vector of floats (I its int32 lanes) or
// one float (I int32_t), in the same order: the same bits on every
// instruction set and thread count.
template <class V, class I>
__attribute__((always_inline)) inline void max_pool_grad_3x3_lanes(const PoolGeometry& p, const float* image,
                                                                    const float* dy, float* grad, int64_t c0) {
  const int64_t ch = p.c;
  auto at = [&](int64_t ih, int64_t iw) { return (ih * p.w + iw) * ch + c0; };
  for (int64_t oh = 0; oh < p.oh; ++oh) {
    const int64_t top = oh - p.pad_h;
    bool row_in[3];
    for (int i = 0; i < 3; ++i) row_in[i] = top + i >= 0 && top + i < p.h;
    V acc[3][3] = {};
    // The column iw leaves the windows: its three sums go into dx.
    auto flush = [&](int64_t iw, int j) {
      if (iw < 0 || iw >= p.w) return;
      for (int i = 0; i < 3; ++i)
        if (row_in[i]) simd::store<V>(grad + at(top + i, iw), simd::load<V>(grad + at(top + i, iw)) + acc[i][j]);
    };
    for (int64_t ow = 0; ow < p.ow; ++ow) {
      const int64_t left = ow - p.pad_w;
      const Window win = window(p, oh, ow);
      V best = simd::load<V>(image + at(win.h0, win.w0));
      I won = I{} + int32_t((win.h0 - top) * 3 + (win.w0 - left));
      for (int64_t ih = win.h0; ih < win.h1; ++ih)
        for (int64_t iw = win.w0; iw < win.w1; ++iw) {
          const V v = simd::load<V>(image + at(ih, iw));
          const auto more = v > best;
          best = more ? v : best;
          won = more ? I{} + int32_t((ih - top) * 3 + (iw - left)) : won;
        }
      const V g = simd::load<V>(dy + (oh * p.ow + ow) * ch + c0);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) acc[i][j] += won == i * 3 + j ? g : V{};
      flush(left, 0);
      for (int i = 0; i < 3; ++i) acc[i][0] = acc[i][1], acc[i][1] = acc[i][2], acc[i][2] = V{};
    }
    const int64_t after = p.ow - p.pad_w;  // the first column no window of this row has left
    flush(after, 0);
    flush(after + 1, 1);
  }
}

template <int W>
__attribute__((always_inline)) inline void max_pool_grad_3x3_image_body(const PoolGeometry& p, const float* image,
                                                                         const float* dy, float* grad) {
  simd::for_channel_blocks<W>(p.c, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
    using V = decltype(lanes);
    max_pool_grad_3x3_lanes<V, IntLanes<V>>(p, image, dy, grad, c0);
  });
}

AXON_CPU_DISPATCH(max_pool_grad_3x3_image, (const PoolGeometry& p, const float* image, const float* dy, float* grad),
                  (p, image, dy, grad))

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
  // pixels (no clearing pass, no read-modify-write); otherwise dx is cleared
  // first and windows add into it.
  const bool tiles = p.sh == p.kh && p.sw == p.kw && p.pad_h == 0 && p.pad_w == 0 && p.oh * p.kh == p.h &&
                     p.ow * p.kw == p.w;
  const bool sliding_3x3 = p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1;
  const int64_t images = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, image_size));
  d.pool().for_ranges(p.n, images, dx.numel() >= kSerialElements, [&](int, int64_t n0, int64_t n1) {
    if (!tiles) std::memset(dxp + n0 * image_size, 0, sizeof(float) * static_cast<size_t>((n1 - n0) * image_size));
    for (int64_t n = n0; n < n1; ++n) {
      const float* image = xp + n * image_size;
      const float* g = dyp + n * p.oh * p.ow * ch;
      if (sliding_3x3)
        max_pool_grad_3x3_image(p, image, g, dxp + n * image_size);
      else
        max_pool_grad_image(p, image, g, dxp + n * image_size, tiles);
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
