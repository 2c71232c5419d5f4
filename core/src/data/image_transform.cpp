// TensorFlow's projective transform reads each output pixel from a source
// point mapped into the image by the fill mode (scipy's ndimage rules, as
// TensorFlow has them, including where they clamp), then interpolates.
#include <axon/data/image_transform.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace axon::data {
namespace {

// The source coordinate for `c` along an axis of `len` pixels.
template <FillMode mode>
float map_coordinate(float c, int64_t len) {
  const float last = static_cast<float>(len - 1);
  if constexpr (mode == FillMode::constant) {
    return c;
  } else if constexpr (mode == FillMode::nearest) {
    return std::clamp(c, 0.0f, last);
  } else if constexpr (mode == FillMode::reflect) {
    if (c < 0) {
      if (len <= 1) return 0;
      const auto period = static_cast<float>(2 * len);
      // TensorFlow folds by whole periods first (its test is c < 2 len,
      // true for every negative c), then reflects about -0.5.
      c = period * static_cast<float>(static_cast<int64_t>(-c / period)) + c;
      c = c < -static_cast<float>(len) ? c + period : -c - 1;
    } else if (c > last) {
      if (len <= 1) return 0;
      const auto period = static_cast<float>(2 * len);
      c -= period * static_cast<float>(static_cast<int64_t>(c / period));
      if (c >= static_cast<float>(len)) c = period - c - 1;
    }
    return std::clamp(c, 0.0f, last);
  } else {  // wrap
    if (c < 0) {
      if (len <= 1) return 0;
      c += static_cast<float>(len) * static_cast<float>(static_cast<int64_t>(-c / last) + 1);
    } else if (c > last) {
      if (len <= 1) return 0;
      c -= static_cast<float>(len) * static_cast<float>(static_cast<int64_t>(c / last));
    }
    return std::clamp(c, 0.0f, last);
  }
}

// One loop per fill mode and interpolation, so the per-pixel work has no
// switches; pixels whose taps all lie inside read without bounds checks.
template <FillMode mode, Interpolation interpolation>
void transform(const float* in, const ImageSize& size, const ProjectiveTransform& t, float fill_value, float* out) {
  const int64_t h = size.height, w = size.width, ch = size.channels;
  auto read = [&](int64_t y, int64_t x, int64_t c) {
    return y >= 0 && y < h && x >= 0 && x < w ? in[(y * w + x) * ch + c] : fill_value;
  };
  for (int64_t oy = 0; oy < h; ++oy)
    for (int64_t ox = 0; ox < w; ++ox, out += ch) {
      const auto fx = static_cast<float>(ox), fy = static_cast<float>(oy);
      const float k = t[6] * fx + t[7] * fy + 1.0f;
      if (k == 0) {  // a point at infinity: outside the image
        std::fill(out, out + ch, fill_value);
        continue;
      }
      // Only the constant mode leaves points outside; their taps outside
      // read the fill value (TensorFlow 2.21 blends it with the edge).
      const float x = map_coordinate<mode>((t[0] * fx + t[1] * fy + t[2]) / k, w);
      const float y = map_coordinate<mode>((t[3] * fx + t[4] * fy + t[5]) / k, h);
      if constexpr (interpolation == Interpolation::nearest) {
        const auto yi = static_cast<int64_t>(std::round(y)), xi = static_cast<int64_t>(std::round(x));
        for (int64_t c = 0; c < ch; ++c) out[c] = read(yi, xi, c);
      } else {
        const float y0 = std::floor(y), x0 = std::floor(x), y1 = y0 + 1, x1 = x0 + 1;
        const auto iy0 = static_cast<int64_t>(y0), ix0 = static_cast<int64_t>(x0);
        if (iy0 >= 0 && iy0 + 1 < h && ix0 >= 0 && ix0 + 1 < w) {
          const float* top = in + (iy0 * w + ix0) * ch;
          const float* bottom = top + w * ch;
          for (int64_t c = 0; c < ch; ++c) {
            const float upper = (x1 - x) * top[c] + (x - x0) * top[ch + c];
            const float lower = (x1 - x) * bottom[c] + (x - x0) * bottom[ch + c];
            out[c] = (y1 - y) * upper + (y - y0) * lower;
          }
          continue;
        }
        for (int64_t c = 0; c < ch; ++c) {
          const float upper = (x1 - x) * read(iy0, ix0, c) + (x - x0) * read(iy0, ix0 + 1, c);
          const float lower = (x1 - x) * read(iy0 + 1, ix0, c) + (x - x0) * read(iy0 + 1, ix0 + 1, c);
          out[c] = (y1 - y) * upper + (y - y0) * lower;
        }
      }
    }
}

template <FillMode mode>
void transform(const float* in, const ImageSize& size, const ProjectiveTransform& t, Interpolation interpolation,
               float fill_value, float* out) {
  if (interpolation == Interpolation::nearest)
    transform<mode, Interpolation::nearest>(in, size, t, fill_value, out);
  else
    transform<mode, Interpolation::bilinear>(in, size, t, fill_value, out);
}

}  // namespace

void projective_transform(const float* in, const ImageSize& size, const ProjectiveTransform& t,
                          Interpolation interpolation, FillMode fill_mode, float fill_value, float* out) {
  switch (fill_mode) {
    case FillMode::reflect:
      return transform<FillMode::reflect>(in, size, t, interpolation, fill_value, out);
    case FillMode::wrap:
      return transform<FillMode::wrap>(in, size, t, interpolation, fill_value, out);
    case FillMode::constant:
      return transform<FillMode::constant>(in, size, t, interpolation, fill_value, out);
    case FillMode::nearest:
      return transform<FillMode::nearest>(in, size, t, interpolation, fill_value, out);
  }
}

void adjust_contrast(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out) {
  const int64_t h = size.height, w = size.width, ch = size.channels;
  std::vector<float> column(static_cast<size_t>(w * ch), 0.0f), mean(static_cast<size_t>(ch), 0.0f);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t i = 0; i < w * ch; ++i) column[static_cast<size_t>(i)] += in[y * w * ch + i];
  for (float& v : column) v /= static_cast<float>(h);
  for (int64_t x = 0; x < w; ++x)
    for (int64_t c = 0; c < ch; ++c) mean[static_cast<size_t>(c)] += column[static_cast<size_t>(x * ch + c)];
  for (float& v : mean) v /= static_cast<float>(w);
  for (int64_t i = 0; i < size.floats(); ++i) {
    const float m = mean[static_cast<size_t>(i % ch)];
    out[i] = std::clamp((in[i] - m) * factor + m, lo, hi);
  }
}

void adjust_brightness(const float* in, const ImageSize& size, float delta, float lo, float hi, float* out) {
  for (int64_t i = 0; i < size.floats(); ++i) out[i] = std::clamp(in[i] + delta, lo, hi);
}

namespace {
// tf.image.rgb_to_grayscale's weights, in float32.
float grey_of(const float* rgb) { return rgb[0] * 0.2989f + rgb[1] * 0.5870f + rgb[2] * 0.1140f; }

// Keras' _transform_value_range between [lo, hi] and the [0, top] a colour
// layer works on ([0, 255], or [0, 1] for the hue), in float32; nothing
// where the two are the same.
struct ValueScale {
  bool rescaled;
  float lo, width, top;
  ValueScale(float l, float h, float t) : rescaled(!(l == 0.0f && h == t)), lo(l), width(h - l), top(t) {}
  float to(float v) const { return rescaled ? (v - lo) / width * top + 0.0f : v; }
  float back(float v) const { return rescaled ? (v - 0.0f) / top * width + lo : v; }
};

// TensorFlow's RGBToHSV and HSVToRGB of one pixel, in float32 and in its
// order of operations: v the largest channel, s its spread over v, h the
// hue in [0, 1) (0 for a grey); back through the three ramps of 6h. Any
// scale of RGB goes through (s and h do not depend on it).
struct Hsv {
  float h, s, v;
};
Hsv hsv_of(const float* rgb) {
  const float r = rgb[0], g = rgb[1], b = rgb[2];
  const float v = std::max(std::max(r, g), b), range = v - std::min(std::min(r, g), b);
  const float s = v > 0.0f ? range / v : 0.0f;
  const float norm = (1.0f / range) * (1.0f / 6.0f);
  float h = r == v ? norm * (g - b) : g == v ? norm * (b - r) + 2.0f / 6.0f : norm * (r - g) + 4.0f / 6.0f;
  h = range > 0.0f ? h : 0.0f;
  return {h < 0.0f ? h + 1.0f : h, s, v};
}
void rgb_of(const Hsv& x, float* rgb) {
  const float dh = x.h * 6.0f, one_s = -x.s + 1.0f;
  const float ramp[3] = {std::min(std::max(std::fabs(dh - 3.0f) - 1.0f, 0.0f), 1.0f),
                         std::min(std::max(-std::fabs(dh - 2.0f) + 2.0f, 0.0f), 1.0f),
                         std::min(std::max(-std::fabs(dh - 4.0f) + 2.0f, 0.0f), 1.0f)};
  for (int c = 0; c < 3; ++c) rgb[c] = (one_s + x.s * ramp[c]) * x.v;
}
}  // namespace

void grayscale(const float* in, const ImageSize& size, float* out) {
  for (int64_t p = 0; p < size.height * size.width; ++p) {
    const float grey = grey_of(in + 3 * p);
    out[3 * p] = out[3 * p + 1] = out[3 * p + 2] = grey;
  }
}

void invert(const float* in, const ImageSize& size, float top, float* out) {
  for (int64_t i = 0; i < size.floats(); ++i) out[i] = top - in[i];
}

void solarize(const float* in, const ImageSize& size, float addition, float threshold, float lo, float hi,
              float* out) {
  const ValueScale scale(lo, hi, 255.0f);
  for (int64_t i = 0; i < size.floats(); ++i) {
    float v = std::clamp(scale.to(in[i]) + addition, 0.0f, 255.0f);
    v = v < threshold ? v : 255.0f - v;
    out[i] = scale.back(v);
  }
}

void degenerate_color(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out) {
  for (int64_t p = 0; p < size.height * size.width; ++p) {
    const float* rgb = in + 3 * p;
    const float grey = grey_of(rgb);
    for (int64_t c = 0; c < 3; ++c) out[3 * p + c] = std::clamp(rgb[c] + factor * (grey - rgb[c]), lo, hi);
  }
}

void posterize(const float* in, const ImageSize& size, int bits, float lo, float hi, float* out) {
  const ValueScale scale(lo, hi, 255.0f);
  const int shift = 8 - bits;
  for (int64_t i = 0; i < size.floats(); ++i) {
    // TensorFlow's cast to uint8 truncates; values outside [0, 255] (an
    // image outside value_range) saturate here.
    const auto byte = static_cast<unsigned>(std::clamp(scale.to(in[i]), 0.0f, 255.0f));
    out[i] = scale.back(static_cast<float>(byte >> shift << shift));
  }
}

void auto_contrast(const float* in, const ImageSize& size, float lo, float hi, float* out) {
  const ValueScale range(lo, hi, 255.0f);
  const int64_t ch = size.channels, pixels = size.height * size.width;
  for (int64_t c = 0; c < ch; ++c) {
    float low = std::numeric_limits<float>::infinity(), high = -low;
    for (int64_t p = 0; p < pixels; ++p) {
      const float v = range.to(in[p * ch + c]);
      low = std::min(low, v), high = std::max(high, v);
    }
    const float scale = 255.0f / (high - low), offset = -low * scale;
    for (int64_t p = 0; p < pixels; ++p) {
      const float back = range.back(std::clamp(range.to(in[p * ch + c]) * scale + offset, 0.0f, 255.0f));
      out[p * ch + c] = std::isnan(back) ? in[p * ch + c] : back;  // Keras' where(isnan(...), original, ...)
    }
  }
}

void sharpen(const float* in, const ImageSize& size, float sharpness, float lo, float hi, float* out) {
  const float edge = 1.0f / 13.0f, centre = 5.0f / 13.0f;  // Keras' kernel, in float32
  const int64_t h = size.height, w = size.width, ch = size.channels;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t c = 0; c < ch; ++c) {
        float smooth = 0.0f;
        for (int64_t dy = -1; dy <= 1; ++dy)
          for (int64_t dx = -1; dx <= 1; ++dx) {
            const int64_t sy = y + dy, sx = x + dx;
            if (sy < 0 || sy >= h || sx < 0 || sx >= w) continue;  // SAME padding's zeros
            smooth += (dy == 0 && dx == 0 ? centre : edge) * in[(sy * w + sx) * ch + c];
          }
        const float v = in[(y * w + x) * ch + c];
        out[(y * w + x) * ch + c] = std::clamp(v + (1.0f - sharpness) * (smooth - v), lo, hi);
      }
}

void flip(const float* in, const ImageSize& size, bool horizontal, bool vertical, float* out) {
  const int64_t h = size.height, w = size.width, ch = size.channels;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sy = vertical ? h - 1 - y : y, sx = horizontal ? w - 1 - x : x;
      std::copy_n(in + (sy * w + sx) * ch, ch, out + (y * w + x) * ch);
    }
}

void crop(const float* in, const ImageSize& size, int64_t top, int64_t left, int64_t rows, int64_t cols, float* out) {
  const int64_t ch = size.channels;
  for (int64_t y = 0; y < rows; ++y)
    std::copy_n(in + ((top + y) * size.width + left) * ch, cols * ch, out + y * cols * ch);
}

Window aspect_window(const ImageSize& size, int64_t height, int64_t width) {
  Window w;
  w.rows = std::clamp(size.width * height / width, int64_t{1}, size.height);
  w.cols = std::clamp(size.height * width / height, int64_t{1}, size.width);
  w.top = (size.height - w.rows) / 2;
  w.left = (size.width - w.cols) / 2;
  return w;
}

namespace {
// Keras' one-dimensional Gaussian of `size` taps in float32, summing to 1.
std::vector<float> gaussian_taps(int64_t size, float sigma) {
  std::vector<float> g(static_cast<size_t>(size));
  const float centre = (static_cast<float>(size) - 1.0f) / 2.0f;
  float sum = 0.0f;
  for (int64_t i = 0; i < size; ++i) {
    const float x = (static_cast<float>(i) - centre) / sigma;
    g[static_cast<size_t>(i)] = std::exp(-0.5f * (x * x));
  }
  for (const float v : g) sum += v;
  for (float& v : g) v /= sum;
  return g;
}
}  // namespace

void gaussian_blur(const float* in, const ImageSize& size, std::array<int64_t, 2> kernel_size,
                   std::array<float, 2> sigma, float* out) {
  const int64_t kh = kernel_size[0], kw = kernel_size[1], ch = size.channels;
  const std::vector<float> across = gaussian_taps(kh, sigma[0]), down = gaussian_taps(kw, sigma[1]);
  // Keras' outer product [kw, kh] (down by across), read row by row as [kh, kw].
  std::vector<float> kernel(static_cast<size_t>(kh * kw));
  for (int64_t f = 0; f < kh * kw; ++f)
    kernel[static_cast<size_t>(f)] = down[static_cast<size_t>(f / kh)] * across[static_cast<size_t>(f % kh)];
  const int64_t top = (kh - 1) / 2, left = (kw - 1) / 2;
  for (int64_t y = 0; y < size.height; ++y)
    for (int64_t x = 0; x < size.width; ++x)
      for (int64_t c = 0; c < ch; ++c) {
        float sum = 0.0f;
        for (int64_t r = 0; r < kh; ++r) {
          const int64_t iy = y + r - top;
          if (iy < 0 || iy >= size.height) continue;
          const float* row = in + iy * size.width * ch + c;
          for (int64_t s = 0; s < kw; ++s) {
            const int64_t ix = x + s - left;
            if (ix >= 0 && ix < size.width) sum += row[ix * ch] * kernel[static_cast<size_t>(r * kw + s)];
          }
        }
        out[(y * size.width + x) * ch + c] = sum;
      }
}

void adjust_saturation(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out) {
  for (int64_t p = 0; p < size.height * size.width; ++p) {
    Hsv x = hsv_of(in + 3 * p);
    x.s = std::min(std::max(x.s * factor, lo), hi);
    rgb_of(x, out + 3 * p);
  }
}

void adjust_hue(const float* in, const ImageSize& size, float delta, float lo, float hi, float* out) {
  const ValueScale scale(lo, hi, 1.0f);
  for (int64_t p = 0; p < size.height * size.width; ++p) {
    float rgb[3];
    for (int c = 0; c < 3; ++c) rgb[c] = scale.to(in[3 * p + c]);
    Hsv x = hsv_of(rgb);
    x.h += delta;
    x.h = x.h > 1.0f ? x.h - 1.0f : x.h;
    x.h = x.h < 0.0f ? x.h + 1.0f : x.h;
    rgb_of(x, rgb);
    for (int c = 0; c < 3; ++c) out[3 * p + c] = scale.back(std::min(std::max(rgb[c], 0.0f), 1.0f));
  }
}

}  // namespace axon::data
