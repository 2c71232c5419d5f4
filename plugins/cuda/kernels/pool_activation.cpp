// MaxPool, Relu and ReluGrad on cuDNN; MaxPoolGrad, AvgPool and AvgPoolGrad
// on axon's own kernels (pooling.cu). SAME padding is applied by copying the input into a buffer
// padded with -inf, so the result never depends on how cuDNN treats its own
// padding, and asymmetric padding works.
#include "cuda_device.hpp"
#include "cudnn_limits.hpp"
#include "elementwise.hpp"
#include "pooling.hpp"

#include <axon/op_geometry.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace axon::cuda {

namespace {

const float kOne = 1.f, kZero = 0.f;

// RAII holders for cuDNN descriptors used within one call.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc() { CUDNN_CHECK(cudnnCreateTensorDescriptor(&d)); }
  ~TensorDesc() { cudnnDestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

int as_int(int64_t v, const char* op) {
  sdk::require(v <= INT32_MAX, sdk::format("%s: dimension %lld is too large for cuDNN", op, (long long)v));
  return static_cast<int>(v);
}

void set_nhwc(TensorDesc& t, int64_t n, int64_t h, int64_t w, int64_t c, const char* op) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, as_int(n, op), as_int(c, op),
                                         as_int(h, op), as_int(w, op)));
}

// TensorFlow's geometry (op_geometry.hpp); cuDNN is given the whole padding
// as an explicit border, so it pads nothing itself.
struct Pool : PoolGeometry {
  explicit Pool(const PoolGeometry& g) : PoolGeometry(g) {}
  bool padded() const { return pad_h_total != 0 || pad_w_total != 0; }
  int64_t hp() const { return h + pad_h_total; }
  int64_t wp() const { return w + pad_w_total; }
};

struct PoolDesc {
  cudnnPoolingDescriptor_t d = nullptr;
  explicit PoolDesc(const axon_pool_attrs& a) {
    CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d));
    // Deterministic max: the gradient goes to one input per window.
    CUDNN_CHECK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN, a.window_h,
                                            a.window_w, 0, 0, a.stride_h, a.stride_w));
  }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
};

// x, or a copy of x padded with -inf (TensorFlow's SAME for max pooling).
const float* padded_input(CudaDevice& d, const Pool& g, const float* x, std::optional<CudaDevice::Scratch>& buf) {
  if (!g.padded()) return x;
  buf.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
  launch::window_copy(d.stream(), x, g.n, g.h, g.w, g.c, buf->get<float>(), g.hp(), g.wp(), -g.pad_h, -g.pad_w,
                      -std::numeric_limits<float>::infinity());
  return buf->get<float>();
}

void max_pool(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  const auto& a = c.attrs<axon_pool_attrs>();
  const Pool g(pool_geometry(a, x.c()));
  if (y.numel() == 0) return;
  require_cudnn_size(c.op(), g.padded() ? "the input (with SAME's -inf border)" : "the input",
                     {g.n, g.hp(), g.wp(), g.c});
  std::optional<CudaDevice::Scratch> xpad;
  const float* xin = padded_input(d, g, x.data<float>(), xpad);
  TensorDesc xd, yd;
  set_nhwc(xd, g.n, g.hp(), g.wp(), g.c, c.op());
  set_nhwc(yd, g.n, g.oh, g.ow, g.c, c.op());
  PoolDesc pd(a);
  CUDNN_CHECK(cudnnPoolingForward(d.cudnn(), pd.d, &kOne, xd.d, xin, &kZero, yd.d, y.raw()));
}

// The geometry axon's own pooling kernels take (pool_math.hpp).
PoolShape pool_shape(const axon_pool_attrs& a, const sdk::TensorRef& x) {
  const PoolGeometry g = pool_geometry(a, x.c());
  return {g.n, g.h, g.w, g.c, g.kh, g.kw, g.oh, g.ow, g.sh, g.sw, g.pad_h, g.pad_w};
}

// Not cuDNN: which of tied maxima CUDNN_POOLING_MAX_DETERMINISTIC gives the
// gradient is not documented, and the op table says the first (row-major).
void max_pool_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), dy = c.input(2), dx = c.output(0);
  if (dx.numel() == 0) return;
  const PoolShape shape = pool_shape(c.attrs<axon_pool_attrs>(), x);
  CudaDevice::Scratch taps(d, launch::max_pool_grad_scratch(shape) * sizeof(int32_t));
  launch::max_pool_grad(d.stream(), shape, x.data<float>(), dy.data<float>(), dx.data<float>(), taps.get<int32_t>());
}

void avg_pool(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  launch::avg_pool(d.stream(), pool_shape(c.attrs<axon_pool_attrs>(), x), x.data<float>(), y.data<float>());
}

// dx's shape is x's.
void avg_pool_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), dx = c.output(0);
  launch::avg_pool_grad(d.stream(), pool_shape(c.attrs<axon_pool_attrs>(), dx), dy.data<float>(), dx.data<float>());
}

struct ActivationDesc {
  cudnnActivationDescriptor_t d = nullptr;
  ActivationDesc() {
    CUDNN_CHECK(cudnnCreateActivationDescriptor(&d));
    CUDNN_CHECK(cudnnSetActivationDescriptor(d, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0));
  }
  ~ActivationDesc() { cudnnDestroyActivationDescriptor(d); }
  ActivationDesc(const ActivationDesc&) = delete;
  ActivationDesc& operator=(const ActivationDesc&) = delete;
};

// Elementwise: any shape is described as packed [1, 1, 1, n] tensors of at
// most kActivationChunk elements (cuDNN takes at most 2^31 - 1), in turn.
constexpr int64_t kActivationChunk = int64_t{1} << 30;

template <class F>
void in_chunks(int64_t n, F f) {
  for (int64_t at = 0; at < n; at += kActivationChunk) {
    const int64_t count = std::min(kActivationChunk, n - at);
    TensorDesc t;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, static_cast<int>(count)));
    f(t.d, at);
  }
}

void relu(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  ActivationDesc a;
  in_chunks(x.numel(), [&](cudnnTensorDescriptor_t t, int64_t at) {
    CUDNN_CHECK(
        cudnnActivationForward(d.cudnn(), a.d, &kOne, t, x.data<float>() + at, &kZero, t, y.data<float>() + at));
  });
}

void relu_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), y = c.input(1), dx = c.output(0);
  ActivationDesc a;
  // relu(x) > 0 exactly where x > 0, so y stands in for x.
  in_chunks(dx.numel(), [&](cudnnTensorDescriptor_t t, int64_t at) {
    const float* yp = y.data<float>() + at;
    CUDNN_CHECK(cudnnActivationBackward(d.cudnn(), a.d, &kOne, t, yp, t, dy.data<float>() + at, t, yp, &kZero, t,
                                        dx.data<float>() + at));
  });
}

}  // namespace

void register_pool_activation_kernels(sdk::KernelTable& t) {
  add<OpId::MaxPool, max_pool>(t);
  add<OpId::MaxPoolGrad, max_pool_grad>(t);
  add<OpId::AvgPool, avg_pool>(t);
  add<OpId::AvgPoolGrad, avg_pool_grad>(t);
  add<OpId::Relu, relu>(t);
  add<OpId::ReluGrad, relu_grad>(t);
}

}  // namespace axon::cuda
