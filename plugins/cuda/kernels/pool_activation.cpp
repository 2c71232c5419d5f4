// MaxPool, MaxPoolGrad, Relu and ReluGrad on cuDNN. SAME padding is applied by
// copying the input into a buffer padded with -inf, so the result never
// depends on how cuDNN treats its own padding, and asymmetric padding works.
#include "cuda_device.hpp"
#include "elementwise.hpp"
#include "windows.hpp"

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

struct PoolGeometry {
  int64_t n, h, w, c;
  Window wh, ww;
  int window_h, window_w, stride_h, stride_w;
  bool padded() const { return wh.pad_total != 0 || ww.pad_total != 0; }
  int64_t hp() const { return h + wh.pad_total; }
  int64_t wp() const { return w + ww.pad_total; }
};

PoolGeometry pool_geometry(const sdk::KernelCall& c, const sdk::TensorRef& x) {
  const auto& a = c.attrs<axon_pool_attrs>();
  sdk::require(x.rank() == 4, sdk::format("%s: input must be NHWC (rank 4), got %s", c.op(), x.shape_string().c_str()));
  sdk::require(a.window_h >= 1 && a.window_w >= 1 && a.stride_h >= 1 && a.stride_w >= 1,
               sdk::format("%s: window and strides must be >= 1", c.op()));
  sdk::require(a.padding == AXON_PADDING_SAME || a.padding == AXON_PADDING_VALID, sdk::format("%s: unknown padding", c.op()));
  PoolGeometry g{x.dim(0), x.dim(1), x.dim(2), x.dim(3), {}, {}, a.window_h, a.window_w, a.stride_h, a.stride_w};
  g.wh = tf_window(g.h, a.window_h, a.stride_h, 1, a.padding);
  g.ww = tf_window(g.w, a.window_w, a.stride_w, 1, a.padding);
  return g;
}

void expect_out(const sdk::KernelCall& c, const sdk::TensorRef& t, const PoolGeometry& g, const char* what) {
  const bool ok = t.rank() == 4 && t.dim(0) == g.n && t.dim(1) == g.wh.out && t.dim(2) == g.ww.out && t.dim(3) == g.c;
  if (!ok)
    sdk::fail(AXON_INVALID_ARGUMENT, sdk::format("%s: %s must be [%lld,%lld,%lld,%lld], got %s", c.op(), what, (long long)g.n,
                                                 (long long)g.wh.out, (long long)g.ww.out, (long long)g.c,
                                                 t.shape_string().c_str()));
}

struct PoolDesc {
  cudnnPoolingDescriptor_t d = nullptr;
  explicit PoolDesc(const PoolGeometry& g) {
    CUDNN_CHECK(cudnnCreatePoolingDescriptor(&d));
    // Deterministic max: the gradient goes to one input per window.
    CUDNN_CHECK(cudnnSetPooling2dDescriptor(d, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_PROPAGATE_NAN, g.window_h, g.window_w,
                                            0, 0, g.stride_h, g.stride_w));
  }
  ~PoolDesc() { cudnnDestroyPoolingDescriptor(d); }
  PoolDesc(const PoolDesc&) = delete;
  PoolDesc& operator=(const PoolDesc&) = delete;
};

// x, or a copy of x padded with -inf (TensorFlow's SAME for max pooling).
const float* padded_input(CudaDevice& d, const PoolGeometry& g, const float* x, std::optional<CudaDevice::Scratch>& buf) {
  if (!g.padded()) return x;
  buf.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
  launch::window_copy(d.stream(), x, g.n, g.h, g.w, g.c, buf->get<float>(), g.hp(), g.wp(), -g.wh.pad_before,
                      -g.ww.pad_before, -std::numeric_limits<float>::infinity());
  return buf->get<float>();
}

void max_pool(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, x, AXON_FLOAT32, "x");
  expect_dtype(c, y, AXON_FLOAT32, "y");
  PoolGeometry g = pool_geometry(c, x);
  expect_out(c, y, g, "output");
  if (y.numel() == 0) return;
  std::optional<CudaDevice::Scratch> xpad;
  const float* xin = padded_input(d, g, x.data<float>(), xpad);
  TensorDesc xd, yd;
  set_nhwc(xd, g.n, g.hp(), g.wp(), g.c, c.op());
  set_nhwc(yd, g.n, g.wh.out, g.ww.out, g.c, c.op());
  PoolDesc pd(g);
  CUDNN_CHECK(cudnnPoolingForward(d.cudnn(), pd.d, &kOne, xd.d, xin, &kZero, yd.d, y.raw()));
}

void max_pool_grad(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(3, 1);
  auto x = c.input(0), y = c.input(1), dy = c.input(2), dx = c.output(0);
  for (auto* t : {&x, &y, &dy, &dx}) expect_dtype(c, *t, AXON_FLOAT32, "every tensor");
  PoolGeometry g = pool_geometry(c, x);
  expect_out(c, y, g, "y");
  expect_out(c, dy, g, "dy");
  expect_same_shape(c, x, dx, "x and dx");
  if (dx.numel() == 0) return;
  if (y.numel() == 0) return launch::fill(d.stream(), dx.data<float>(), dx.numel(), 0.f);
  std::optional<CudaDevice::Scratch> xpad, dxpad;
  const float* xin = padded_input(d, g, x.data<float>(), xpad);
  float* out = dx.data<float>();
  if (g.padded()) {
    dxpad.emplace(d, g.n * g.hp() * g.wp() * g.c * sizeof(float));
    out = dxpad->get<float>();
  }
  TensorDesc xd, yd;
  set_nhwc(xd, g.n, g.hp(), g.wp(), g.c, c.op());
  set_nhwc(yd, g.n, g.wh.out, g.ww.out, g.c, c.op());
  PoolDesc pd(g);
  CUDNN_CHECK(cudnnPoolingBackward(d.cudnn(), pd.d, &kOne, yd.d, y.raw(), yd.d, dy.raw(), xd.d, xin, &kZero, xd.d, out));
  if (g.padded())
    launch::window_copy(d.stream(), out, g.n, g.hp(), g.wp(), g.c, dx.data<float>(), g.h, g.w, g.wh.pad_before,
                        g.ww.pad_before, 0.f);
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

// Elementwise: any shape is described as one packed [1, 1, 1, n] tensor.
void set_flat(TensorDesc& t, int64_t n, const char* op) {
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(t.d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, 1, 1, as_int(n, op)));
}

void relu(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(1, 1);
  auto x = c.input(0), y = c.output(0);
  expect_dtype(c, x, AXON_FLOAT32, "x");
  expect_dtype(c, y, AXON_FLOAT32, "y");
  sdk::require(x.numel() == y.numel(), sdk::format("%s: x %s and y %s differ in size", c.op(), x.shape_string().c_str(),
                                                   y.shape_string().c_str()));
  if (x.numel() == 0) return;
  TensorDesc t;
  set_flat(t, x.numel(), c.op());
  ActivationDesc a;
  CUDNN_CHECK(cudnnActivationForward(d.cudnn(), a.d, &kOne, t.d, x.raw(), &kZero, t.d, y.raw()));
}

void relu_grad(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(2, 1);
  auto dy = c.input(0), y = c.input(1), dx = c.output(0);
  for (auto* t : {&dy, &y, &dx}) expect_dtype(c, *t, AXON_FLOAT32, "every tensor");
  sdk::require(dy.numel() == y.numel() && dy.numel() == dx.numel(),
               sdk::format("%s: dy %s, y %s and dx %s differ in size", c.op(), dy.shape_string().c_str(),
                           y.shape_string().c_str(), dx.shape_string().c_str()));
  if (dx.numel() == 0) return;
  TensorDesc t;
  set_flat(t, dx.numel(), c.op());
  ActivationDesc a;
  // relu(x) > 0 exactly where x > 0, so y stands in for x.
  CUDNN_CHECK(cudnnActivationBackward(d.cudnn(), a.d, &kOne, t.d, y.raw(), t.d, dy.raw(), t.d, y.raw(), &kZero, t.d,
                                      dx.raw()));
}

}  // namespace

void register_pool_activation_kernels(sdk::KernelTable& t) {
  t.add("MaxPool", AXON_FLOAT32, cuda_kernel<max_pool>);
  t.add("MaxPoolGrad", AXON_FLOAT32, cuda_kernel<max_pool_grad>);
  t.add("Relu", AXON_FLOAT32, cuda_kernel<relu>);
  t.add("ReluGrad", AXON_FLOAT32, cuda_kernel<relu_grad>);
}

}  // namespace axon::cuda
