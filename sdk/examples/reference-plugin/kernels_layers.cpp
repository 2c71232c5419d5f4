// Naive, obviously correct kernels of the layers ABI 1.4 added: average
// pooling and its gradient. As in kernels.cpp, every call is checked against the op table
// first and sums are accumulated in double.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ref {
namespace {

using namespace axon::sdk;
using axon::PoolGeometry;

// The op table's validator before the kernel, as kernels.cpp registers its own.
template <axon::OpId Op, void (*F)(Device&, const KernelCall&)>
axon_status validated(void* device_ctx, const axon_kernel_call* call, axon_error* err) {
  return guarded(err, [&] {
    std::string why;
    if (!axon::validate_call(axon::op_schema(Op), *call, &why)) fail(AXON_INVALID_ARGUMENT, why);
    F(*static_cast<Device*>(device_ctx), KernelCall(*call));
  });
}

void store(const std::vector<double>& acc, float* out) {
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
}

// ------------------------------------------------------------------ average pooling

// The real (not padded) input rows [h0, h1) and columns [w0, w1) of the window
// of output pixel (oh, ow): TensorFlow averages over these taps only.
struct Window {
  int64_t h0, h1, w0, w1;
  int64_t taps() const { return (h1 - h0) * (w1 - w0); }
};

Window window(const PoolGeometry& p, int64_t oh, int64_t ow) {
  const int64_t h = oh * p.sh - p.pad_h, w = ow * p.sw - p.pad_w;
  return {std::max<int64_t>(h, 0), std::min(h + p.kh, p.h), std::max<int64_t>(w, 0), std::min(w + p.kw, p.w)};
}

void avg_pool(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        const Window win = window(p, oh, ow);
        for (int64_t ch = 0; ch < p.c; ++ch) {
          double s = 0.0;
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw) s += xp[((n * p.h + ih) * p.w + iw) * p.c + ch];
          yp[((n * p.oh + oh) * p.ow + ow) * p.c + ch] = static_cast<float>(s / double(win.taps()));
        }
      }
}

// Each output's gradient, divided by its window's tap count, goes to every tap.
void avg_pool_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), dx = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), dx.c());
  const float* dyp = dy.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow) {
        const Window win = window(p, oh, ow);
        for (int64_t ch = 0; ch < p.c; ++ch) {
          const double g = double(dyp[((n * p.oh + oh) * p.ow + ow) * p.c + ch]) / double(win.taps());
          for (int64_t ih = win.h0; ih < win.h1; ++ih)
            for (int64_t iw = win.w0; iw < win.w1; ++iw) acc[static_cast<size_t>(((n * p.h + ih) * p.w + iw) * p.c + ch)] += g;
        }
      }
  store(acc, dx.data<float>());
}

template <axon::OpId Op, void (*F)(Device&, const KernelCall&)>
void add(KernelTable& t) {
  t.add(Op, &validated<Op, F>);
}

}  // namespace

void add_layer_kernels(KernelTable& t) {
  using axon::OpId;
  add<OpId::AvgPool, avg_pool>(t);
  add<OpId::AvgPoolGrad, avg_pool_grad>(t);
}

}  // namespace ref
