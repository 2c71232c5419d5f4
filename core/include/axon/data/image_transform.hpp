// The image arithmetic of Keras' augmentation layers, on one float32 HWC
// image at a time (core/src/nn/augmentation.cpp applies them per sample):
// TensorFlow's ImageProjectiveTransformV3, which Keras' RandomTranslation,
// RandomRotation, RandomZoom and RandomShear call, with its interpolations
// and fill modes; RandomContrast's and RandomBrightness' adjustments,
// RandomGrayscale's grey; flips and crops. Float32 in TensorFlow's order of
// operations, so results agree with Keras' to the last bit or so (goldens
// check within 1e-5).
#pragma once

#include <array>
#include <cstdint>

namespace axon::data {

enum class Interpolation { nearest, bilinear };
// What a point outside the image reads: reflect (d c b a | a b c d | d c b a),
// wrap (a b c d | a b c d | a b c d), constant (the fill value) or nearest
// (the edge pixel), as TensorFlow maps them.
enum class FillMode { reflect, wrap, constant, nearest };

// [a0, a1, a2, b0, b1, b2, c0, c1]: the *output* pixel (x, y) reads the input
// at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1.
using ProjectiveTransform = std::array<float, 8>;

struct ImageSize {
  int64_t height = 0, width = 0, channels = 0;
  int64_t floats() const { return height * width * channels; }
};

// out (same size as in) = in transformed; in and out must not overlap.
void projective_transform(const float* in, const ImageSize& size, const ProjectiveTransform& t,
                          Interpolation interpolation, FillMode fill_mode, float fill_value, float* out);

// Keras' RandomContrast: per channel, (x - mean) * factor + mean with the
// mean over height, then width; clipped to [lo, hi]. in == out allowed.
void adjust_contrast(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out);

// Keras' RandomBrightness: in + delta, clipped to [lo, hi]. in == out allowed.
void adjust_brightness(const float* in, const ImageSize& size, float delta, float lo, float hi, float* out);

// tf.image.rgb_to_grayscale of an RGB image (0.2989 r + 0.5870 g + 0.1140 b,
// float32), written to each of its three channels. in == out allowed.
void grayscale(const float* in, const ImageSize& size, float* out);

// Keras' RandomInvert: top - in. in == out allowed.
void invert(const float* in, const ImageSize& size, float top, float* out);

// Keras' Solarization in float32: in from [lo, hi] to [0, 255] (skipped
// where the range is [0, 255]), + addition clipped to [0, 255], each value v
// at or above threshold turned to 255 - v, and back to [lo, hi]. in == out
// allowed.
void solarize(const float* in, const ImageSize& size, float addition, float threshold, float lo, float hi, float* out);

// Keras' RandomColorDegeneration of an RGB image: in + factor (grey - in)
// with grayscale()'s grey, clipped to [lo, hi]. in == out allowed.
void degenerate_color(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out);

// Keras' RandomPosterization in float32: in from [lo, hi] to [0, 255]
// (skipped where the range is [0, 255]), truncated to an 8-bit integer
// whose low 8 - bits bits are cleared, and back to [lo, hi]. in == out
// allowed.
void posterize(const float* in, const ImageSize& size, int bits, float lo, float hi, float* out);

// Keras' RandomSaturation of an RGB image, in float32: through
// TensorFlow's rgb_to_hsv (any scale), the saturation times factor clipped
// to [lo, hi] (Keras' value_range, sorted: with [0, 255] nothing clips above
// 1), and back through hsv_to_rgb, unclipped. in == out allowed.
void adjust_saturation(const float* in, const ImageSize& size, float factor, float lo, float hi, float* out);

// Keras' RandomHue of an RGB image, in float32: in from [lo, hi] to [0, 1]
// (skipped where the range is [0, 1]), through rgb_to_hsv, delta added to
// the hue (above 1: less 1, below 0: plus 1), back through hsv_to_rgb,
// clipped to [0, 1] and taken back to [lo, hi]. in == out allowed.
void adjust_hue(const float* in, const ImageSize& size, float delta, float lo, float hi, float* out);

// keras.ops.image.gaussian_blur (TensorFlow's) of an image, in float32: per
// channel, the depthwise convolution with zeros outside the image of the
// kernel Keras builds for kernel_size {k0, k1} (odd) and sigma {s0, s1}:
// g(k, s) = exp(-0.5 ((i - (k - 1) / 2) / s)^2) over i < k, normalised to
// sum 1; the outer product g(k1, s1) x g(k0, s0), of shape [k1, k0], read
// as [k0, k1] (the same where k0 = k1: s1 blurs down, s0 across). in != out.
void gaussian_blur(const float* in, const ImageSize& size, std::array<int64_t, 2> kernel_size,
                   std::array<float, 2> sigma, float* out);

// Keras' AutoContrast in float32: in from [lo, hi] to [0, 255] (skipped
// where the range is [0, 255]); per channel, with its minimum m and maximum
// M there, v * s + (-m * s) for s = 255 / (M - m), clipped to [0, 255] and
// taken back to [lo, hi]; a channel with M = m (NaN there in Keras) keeps
// its values. in != out.
void auto_contrast(const float* in, const ImageSize& size, float lo, float hi, float* out);

// Keras' RandomSharpness: in + (1 - sharpness) (smooth - in), smooth the
// image under [1 1 1; 1 5 1; 1 1 1] / 13 with zeros outside it (a depthwise
// convolution, SAME padding), clipped to [lo, hi]. in != out.
void sharpen(const float* in, const ImageSize& size, float sharpness, float lo, float hi, float* out);

// Mirror left-right (horizontal) and/or top-bottom (vertical). in != out.
void flip(const float* in, const ImageSize& size, bool horizontal, bool vertical, float* out);

// The rows [top, top + rows) and columns [left, left + cols) of in, which
// must lie inside it, into out (rows x cols x channels).
void crop(const float* in, const ImageSize& size, int64_t top, int64_t left, int64_t rows, int64_t cols, float* out);

// Keras' smart_resize window: the largest centred window of a height x
// width target's aspect ratio, Keras' integer offsets.
struct Window {
  int64_t top = 0, left = 0, rows = 0, cols = 0;
};
Window aspect_window(const ImageSize& size, int64_t height, int64_t width);

}  // namespace axon::data
