// Winograd minimal filtering for 3x3 convolutions at stride 1 (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks"): F(m x m, 3x3) turns
// each (m+2) x (m+2) input tile into (m+2)^2 transform points, and the
// convolution into one [tiles, C] x [C, OC] product per point, with (m+2)^2 /
// (9 m^2) of im2col's multiply-adds (m = 2: 1/2.25). conv.cpp's entry points
// call these where use_winograd says so.
#pragma once

#include "device.hpp"
#include "small_gemm.hpp"

#include <axon/op_geometry.hpp>

namespace axon::cpu {

// Whether a pass of g's convolution runs here rather than in conv.cpp's
// im2col kernels.
enum class ConvPass { forward, input_gradient, filter_gradient };
bool use_winograd(const ConvGeometry& g, ConvPass pass);

// Conv2D / _FusedConv2D, Conv2DBackpropInput and Conv2DBackpropFilter, for
// shapes where use_winograd says so (shapes checked by the caller).
// The output rows [0, rows) and columns [0, cols) a caller reads (-1: all):
// tiles wholly beyond are neither computed nor written (a max pooling whose
// windows stop before the output's last row: the CNN's conv2, 11x11 pooled
// to 5x5, needs 5x5 of its 6x6 tiles); on the baseline instruction set,
// whose products go to sgemm, every tile is (winograd.cpp says why).
struct OutputReach {
  int64_t rows = -1, cols = -1;
};
void winograd_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y, const Epilogue& ep,
                     const OutputReach& reach = {});
// accumulate: dx += the gradient (each value added as it is stored: AddN's bits).
void winograd_backprop_input(CpuDevice& d, const ConvGeometry& g, const float* dy, const float* w, float* dx,
                             bool accumulate = false);
void winograd_backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* x, const float* dy, float* dw);

// A 2x2 stride-2 max pooling of the convolution's output (_FusedConv2DMaxPool),
// where winograd_pools_output says so: the output tiles (2x2, or 4x2 as in
// winograd_conv2d) are columns of the pooling's windows, each window pooled
// as it leaves the registers into y [n, ph, pw, oc] and the argmax
// (MaxPool's first maximum; AXON_ARGMAX_NONE where relu left nothing), so
// the conv-sized output is never written.
struct PooledOutput {
  float* y;
  uint8_t* argmax;
  int64_t ph, pw;
};
bool winograd_pools_output(const ConvGeometry& g, const PoolGeometry& pool);
void winograd_conv2d_max_pool(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, const Epilogue& ep,
                              const PooledOutput& out);

// The gradient of a convolution's output as a 2x2 stride-2 max pooling after
// it routes it (_FusedConv2DMaxPoolGrad): the pooled output's gradient [n,
// ph, pw, oc] and its one-byte argmax (AXON_ARGMAX_NONE where relu passed
// nothing). F(2x2, 3x3)'s output tiles are the pooling's windows, so each
// tile's gradient is made in registers from one pooled pixel, with the bits
// the routed conv-sized gradient gives, and that tensor is never written.
struct PooledGradient {
  const float* dy;
  const uint8_t* argmax;
  int64_t ph, pw;
};
// Whether both Winograd gradients (the input gradient only if wanted) take
// a PooledGradient for g's convolution.
bool winograd_takes_pooled_gradient(const ConvGeometry& g, bool input_gradient);
void winograd_backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* x, const PooledGradient& dy, float* dw);
void winograd_backprop_input(CpuDevice& d, const ConvGeometry& g, const PooledGradient& dy, const float* w, float* dx);

}  // namespace axon::cpu
