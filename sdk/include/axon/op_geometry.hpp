// TensorFlow's window geometry for convolution and pooling, written once for
// the host's validation and every plugin: output size and padding per axis,
// and the whole geometry of a Conv2D or MaxPool call.
//   VALID: out = (in - effective) / stride + 1, where effective = (k - 1) * dilation + 1
//   SAME:  out = ceil(in / stride); total padding = max((out - 1) * stride + effective - in, 0),
//          the smaller half before (so an odd total puts the extra row/column after).
#pragma once

#include <axon/plugin_abi.h>

#include <cstdint>
#include <cstring>

namespace axon {

struct WindowAxis {
  int64_t out = 0;         // output size; 0 with VALID when the window does not fit
  int64_t pad_before = 0;  // top / left
  int64_t pad_total = 0;   // top + bottom / left + right
  int64_t extra() const { return pad_total - 2 * pad_before; }  // 0 or 1: the part at the end only
};

constexpr WindowAxis window_axis(int64_t in, int64_t size, int64_t stride, int64_t dilation, axon_padding padding) {
  WindowAxis w;
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

// A transposed convolution's output size, Keras' deconv_output_length
// without output_padding: in * stride, plus under VALID what the dilated
// window reaches beyond a stride. The convolution it is the gradient of
// maps that size back to `in` (window_axis().out).
constexpr int64_t transposed_out(int64_t in, int64_t size, int64_t stride, int64_t dilation, axon_padding padding) {
  const int64_t effective = (size - 1) * dilation + 1;
  return in * stride + (padding == AXON_PADDING_SAME || effective <= stride ? 0 : effective - stride);
}

// Any int may cross the C ABI in an enum field, and reading a value outside
// the enumerators as the C++ enum is undefined: the bytes are read as an int.
inline int raw_enum(const axon_padding& field) {
  int raw = 0;
  static_assert(sizeof raw == sizeof field, "axon_padding is an int");
  std::memcpy(&raw, &field, sizeof raw);
  return raw;
}
inline bool padding_known(const axon_padding& field) {
  const int raw = raw_enum(field);
  return raw == AXON_PADDING_VALID || raw == AXON_PADDING_SAME;
}

// A convolution: image [N,H,W,C], filter [KH,KW,C,OC], output [N,OH,OW,OC].
// `image` is x (or dx's shape), `filter` the filter (or dfilter's shape).
struct ConvGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0, kh = 0, kw = 0, oc = 0, oh = 0, ow = 0;
  int64_t pad_h = 0, pad_w = 0;              // before (top, left)
  int64_t pad_h_total = 0, pad_w_total = 0;  // both sides
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t k() const { return kh * kw * c; }     // im2col row length
  int64_t rows() const { return n * oh * ow; }  // output pixels
};

// The geometry of well-formed attributes and rank-4 shapes (op_validate.hpp
// checks them first; see conv_attrs_problem for the attribute rules).
inline ConvGeometry conv_geometry(const axon_conv2d_attrs& a, const int64_t* image_dims, const int64_t* filter_dims) {
  ConvGeometry g;
  g.n = image_dims[0], g.h = image_dims[1], g.w = image_dims[2], g.c = image_dims[3];
  g.kh = filter_dims[0], g.kw = filter_dims[1], g.oc = filter_dims[3];
  g.sh = a.stride_h, g.sw = a.stride_w, g.dh = a.dilation_h, g.dw = a.dilation_w;
  const axon_padding p = static_cast<axon_padding>(raw_enum(a.padding));
  const WindowAxis ah = window_axis(g.h, g.kh, g.sh, g.dh, p), aw = window_axis(g.w, g.kw, g.sw, g.dw, p);
  g.oh = ah.out, g.pad_h = ah.pad_before, g.pad_h_total = ah.pad_total;
  g.ow = aw.out, g.pad_w = aw.pad_before, g.pad_w_total = aw.pad_total;
  return g;
}
inline ConvGeometry conv_geometry(const axon_conv2d_attrs& a, const axon_tensor& image, const axon_tensor& filter) {
  return conv_geometry(a, image.dims, filter.dims);
}

// Max pooling of an input [N,H,W,C] into [N,OH,OW,C].
struct PoolGeometry {
  int64_t n = 0, h = 0, w = 0, c = 0, kh = 0, kw = 0, oh = 0, ow = 0;
  int64_t pad_h = 0, pad_w = 0, pad_h_total = 0, pad_w_total = 0;
  int64_t sh = 1, sw = 1;
};

inline PoolGeometry pool_geometry(const axon_pool_attrs& a, int64_t n, int64_t h, int64_t w, int64_t c) {
  PoolGeometry g;
  g.n = n, g.h = h, g.w = w, g.c = c;
  g.kh = a.window_h, g.kw = a.window_w, g.sh = a.stride_h, g.sw = a.stride_w;
  const axon_padding p = static_cast<axon_padding>(raw_enum(a.padding));
  const WindowAxis ah = window_axis(g.h, g.kh, g.sh, 1, p), aw = window_axis(g.w, g.kw, g.sw, 1, p);
  g.oh = ah.out, g.pad_h = ah.pad_before, g.pad_h_total = ah.pad_total;
  g.ow = aw.out, g.pad_w = aw.pad_before, g.pad_w_total = aw.pad_total;
  return g;
}
inline PoolGeometry pool_geometry(const axon_pool_attrs& a, const axon_tensor& x) {
  return pool_geometry(a, x.dims[0], x.dims[1], x.dims[2], x.dims[3]);
}

}  // namespace axon
