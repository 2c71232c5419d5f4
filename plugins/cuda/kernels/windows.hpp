// TensorFlow's output sizes and padding for convolution and pooling windows.
// SAME padding may be asymmetric (the extra row/column goes at the end), which
// cuDNN cannot express; callers pad that one row/column themselves.
#pragma once

#include <axon/plugin.hpp>

#include <cstdint>

namespace axon::cuda {

struct Window {
  int64_t out = 0;         // output size
  int64_t pad_before = 0;  // top / left
  int64_t pad_total = 0;   // top + bottom / left + right
  int64_t extra() const { return pad_total - 2 * pad_before; }  // 0 or 1: the asymmetric part
};

inline Window tf_window(int64_t in, int64_t size, int64_t stride, int64_t dilation, axon_padding padding) {
  Window w;
  const int64_t effective = (size - 1) * dilation + 1;
  if (padding == AXON_PADDING_SAME) {
    w.out = (in + stride - 1) / stride;
    const int64_t needed = (w.out - 1) * stride + effective - in;
    w.pad_total = needed > 0 ? needed : 0;
    w.pad_before = w.pad_total / 2;
  } else {
    w.out = in >= effective ? (in - effective) / stride + 1 : 0;
  }
  return w;
}

}  // namespace axon::cuda
