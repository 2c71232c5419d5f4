// The convolution pieces conv.cpp's kernels are made of, for the fused ops
// that run a convolution as one step of a bigger kernel (conv_pool.cpp).
// Rows are output pixels r = (n, oh, ow) in NHWC order; see conv.cpp.
#pragma once

#include "device.hpp"
#include "small_gemm.hpp"

#include <axon/op_geometry.hpp>

#include <cstdint>
#include <functional>

namespace axon::cpu {

// Rows per im2col tile for an inner dimension k: about 384 KiB of floats, so
// a tile and the filter stay in L2 while the product consumes them.
// (Measured on the CNN's shapes: 48-192 Ki floats perform alike; 24 Ki and
// 384 Ki are 10-30% slower.)
int64_t tile_rows(int64_t k);

// The filter's tap offsets for the gathered kernels, computed once per call
// and passed to every conv_rows of that call: `direct` into x (nullptr where
// the gathered kernels do not apply), `padded` into a zero-padded copy of an
// image's rows (nullptr without padding, or where a padded image would be
// too large), for the tiles whose taps touch padding.
struct ConvTaps {
  const int32_t* direct = nullptr;
  const int32_t* padded = nullptr;
};
ConvTaps conv_taps(CpuDevice& d, const ConvGeometry& g);

// y[0 .. e-b) = ep(conv rows [b, e)) on pool thread t (uses its scratch).
void conv_rows(CpuDevice& d, int t, const ConvGeometry& g, const ConvTaps& taps, const float* x, const float* w,
               int64_t b, int64_t e, float* y, const Epilogue& ep);

// Whether conv_rows gives every row the same bits whatever [b, e) it is
// computed in. Not when some products go to sgemm (K >= kSmallK where the
// gathered kernels do not reach, a 1x1 convolution, or no AVX2): sgemm
// rounds a row differently depending on the rows around it.
bool conv_rows_independent(const ConvGeometry& g, const ConvTaps& taps);

// Conv2D / _FusedConv2D on raw buffers, in conv.cpp's own tiles.
void conv2d_into(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y, const Epilogue& ep);

// Stride-1 convolutions into at most 4 channels, output pixels in the
// vector lanes (conv_planar.cpp), bit-identical to conv_rows' gathered
// kernels; conv2d_into takes this path where planar_conv_applies.
bool planar_conv_applies(const ConvGeometry& g);
void planar_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y, const Epilogue& ep,
                   bool parallel);

// Stride-1 convolutions of a one-channel image (a grey image's first
// layer), output channels in the vector lanes, from a zero-padded plane of
// each image (conv_one_channel.cpp); bit-identical to conv_rows' gathered
// kernels; conv2d_into takes this path where one_channel_conv_applies.
bool one_channel_conv_applies(const ConvGeometry& g);
void one_channel_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y,
                        const Epilogue& ep, bool parallel);
// The filter gradient's sums over rows [r0, r1) the same way, dy's rows
// from dy[0] on, into acc ([KH * KW, OC]; accumulate: acc +=), on pool
// thread t (uses its scratch): the gathered tn kernel's bits.
// Conv2DBackpropFilter takes it; the fused conv+pool gradient keeps the
// gathered rows.
bool one_channel_filter_applies(const ConvGeometry& g);
void one_channel_filter_sums(CpuDevice& d, int t, const ConvGeometry& g, const float* x, int64_t r0, int64_t r1,
                             const float* dy, float* acc, bool accumulate);

// Conv2DBackpropFilter and Conv2DBackpropInput on raw buffers (shapes checked
// by the caller). Both use the device's partials() scratch. accumulate: dx
// += the gradient (_Conv2DBackpropInputAccumulate, AddN's bits; also uses
// the device's intermediate() and tile() scratch).
void conv2d_backprop_filter_into(CpuDevice& d, const ConvGeometry& g, const float* x, const float* dy, float* dfilter);
// The same with dy's rows made on demand: fill(b, e, rows) writes rows [b,
// e) of dy ([e - b, oc]) into rows (a max pooling's gradient routed to its
// argmax, conv_pool.cpp). Where the gathered kernels take the filter
// gradient, rows are filled a few KiB at a time into the thread's tile()
// scratch and read from L1, so dy never goes to memory; elsewhere they are
// filled whole into intermediate() first. The same bits as from dy whole.
using FillRows = std::function<void(int64_t b, int64_t e, float* rows)>;
void conv2d_backprop_filter_into(CpuDevice& d, const ConvGeometry& g, const float* x, const FillRows& dy,
                                 float* dfilter);
void conv2d_backprop_input_into(CpuDevice& d, const ConvGeometry& g, const float* dy, const float* w, float* dx,
                                bool accumulate = false);

}  // namespace axon::cpu
