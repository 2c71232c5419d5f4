// For each output row/column: the source position (i + 0.5) * scale - 0.5
// (scale = in / out in float), its floor clamped to the image, the next one
// clamped, and the fraction; top and bottom interpolated along x, then the
// two along y.
#include <axon/data/resize.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace axon::data {
namespace {

struct Tap {
  int64_t lower, upper;
  float lerp;
};

std::vector<Tap> taps(int64_t in_size, int64_t out_size) {
  const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
  std::vector<Tap> t(static_cast<size_t>(out_size));
  for (int64_t i = 0; i < out_size; ++i) {
    const float in = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float in_f = std::floor(in);
    t[static_cast<size_t>(i)] = {std::max(static_cast<int64_t>(in_f), int64_t{0}),
                                 std::min(static_cast<int64_t>(std::ceil(in)), in_size - 1), in - in_f};
  }
  return t;
}

template <class T>
void resize(std::span<const T> in, int64_t rows, int64_t cols, int64_t channels, float* out, int64_t out_rows,
            int64_t out_cols) {
  const std::vector<Tap> ys = taps(rows, out_rows), xs = taps(cols, out_cols);
  for (int64_t y = 0; y < out_rows; ++y) {
    const Tap& ty = ys[static_cast<size_t>(y)];
    const T* top = in.data() + ty.lower * cols * channels;
    const T* bottom = in.data() + ty.upper * cols * channels;
    for (int64_t x = 0; x < out_cols; ++x) {
      const Tap& tx = xs[static_cast<size_t>(x)];
      for (int64_t c = 0; c < channels; ++c) {
        const auto tl = static_cast<float>(top[tx.lower * channels + c]);
        const auto tr = static_cast<float>(top[tx.upper * channels + c]);
        const auto bl = static_cast<float>(bottom[tx.lower * channels + c]);
        const auto br = static_cast<float>(bottom[tx.upper * channels + c]);
        const float t = tl + (tr - tl) * tx.lerp;
        const float b = bl + (br - bl) * tx.lerp;
        *out++ = t + (b - t) * ty.lerp;
      }
    }
  }
}

}  // namespace

void resize_bilinear(std::span<const uint8_t> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                     int64_t out_rows, int64_t out_cols) {
  resize(in, rows, cols, channels, out, out_rows, out_cols);
}

void resize_bilinear(std::span<const float> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                     int64_t out_rows, int64_t out_cols) {
  resize(in, rows, cols, channels, out, out_rows, out_cols);
}

void resize_nearest(std::span<const float> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                    int64_t out_rows, int64_t out_cols) {
  auto source = [](int64_t i, int64_t in_size, int64_t out_size) {
    const float scale = static_cast<float>(in_size) / static_cast<float>(out_size);
    return std::min(static_cast<int64_t>(std::floor((static_cast<float>(i) + 0.5f) * scale)), in_size - 1);
  };
  for (int64_t y = 0; y < out_rows; ++y) {
    const float* row = in.data() + source(y, rows, out_rows) * cols * channels;
    for (int64_t x = 0; x < out_cols; ++x) {
      const float* pixel = row + source(x, cols, out_cols) * channels;
      out = std::copy(pixel, pixel + channels, out);
    }
  }
}

}  // namespace axon::data
