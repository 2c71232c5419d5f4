// TensorFlow's bilinear resize: tf.image.resize(images, [H, W], 'bilinear')
// (antialias off: ResizeBilinear with half-pixel centers), float32, the same
// arithmetic in the same order, so results agree with TensorFlow's to the
// last bit or so (a golden checks within 1e-5); and its 'nearest'
// (ResizeNearestNeighbor with half-pixel centers).
#pragma once

#include <cstdint>
#include <span>

namespace axon::data {

// in: rows x cols x channels uint8 (HWC); out: out_rows x out_cols x channels floats.
void resize_bilinear(std::span<const uint8_t> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                     int64_t out_rows, int64_t out_cols);
// The same for float input (Keras' RandomCrop resizes float images); out
// must not overlap in.
void resize_bilinear(std::span<const float> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                     int64_t out_rows, int64_t out_cols);
// Output pixel (y, x) is input pixel (min(floor((y + 0.5) * scale), rows -
// 1), the same across), scale = rows / out_rows in float. out must not
// overlap in.
void resize_nearest(std::span<const float> in, int64_t rows, int64_t cols, int64_t channels, float* out,
                    int64_t out_rows, int64_t out_cols);

}  // namespace axon::data
