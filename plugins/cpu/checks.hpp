// Argument checks and window geometry shared by the CPU kernels. Every failed
// check throws AXON_INVALID_ARGUMENT with the op name and the shapes involved.
#pragma once

#include <axon/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

// Throws AXON_INVALID_ARGUMENT with a printf-style message when `cond` is
// false. A macro so the message is formatted only on failure: kernels check
// a dozen things per call and formatting costs microseconds.
#define AXON_CHECK(cond, ...) \
  do {                        \
    if (!(cond)) ::axon::sdk::fail(AXON_INVALID_ARGUMENT, ::axon::sdk::format(__VA_ARGS__)); \
  } while (0)

namespace axon::cpu {

using sdk::KernelCall;
using sdk::TensorRef;

// Dtype, rank (-1: any), non-negative dims and a data pointer when non-empty.
void want(const KernelCall& c, const TensorRef& t, const char* what, axon_dtype dt, int rank = -1);
// Exact shape.
void want_shape(const KernelCall& c, const TensorRef& t, const char* what, const std::vector<int64_t>& dims);
void want_same_shape(const KernelCall& c, const TensorRef& t, const char* what, const TensorRef& like);

// Convolution geometry (TensorFlow's VALID/SAME rules): image [N,H,W,C],
// filter [KH,KW,C,OC], output [N,OH,OW,OC].
struct ConvGeom {
  int64_t n, h, w, c, kh, kw, oc, oh, ow, pad_h, pad_w, sh, sw, dh, dw;
  int64_t k() const { return kh * kw * c; }       // im2col row length
  int64_t rows() const { return n * oh * ow; }    // output pixels
};
// `image` is x (or dx), `filter` is the filter (or dfilter).
ConvGeom conv_geometry(const KernelCall& c, const TensorRef& image, const TensorRef& filter);
// The same with conv attributes embedded in a fused op's attributes.
ConvGeom conv_geometry(const KernelCall& c, const axon_conv2d_attrs& a, const TensorRef& image, const TensorRef& filter);

struct PoolGeom {
  int64_t n, h, w, c, kh, kw, oh, ow, pad_h, pad_w, sh, sw;
};
PoolGeom pool_geometry(const KernelCall& c, const TensorRef& x);
// The same for an input of [n, h, w, ch] that is not a tensor of the call
// (a fused op's intermediate).
PoolGeom pool_geometry(const KernelCall& c, const axon_pool_attrs& a, int64_t n, int64_t h, int64_t w, int64_t ch);

}  // namespace axon::cpu
