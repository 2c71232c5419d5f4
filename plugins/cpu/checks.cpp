#include "checks.hpp"

#include <cstring>

namespace axon::cpu {

using sdk::format;
using sdk::require;

void want(const KernelCall& c, const TensorRef& t, const char* what, axon_dtype dt, int rank) {
  AXON_CHECK(t.dtype() == dt, "%s: %s must be %s, got %s", c.op(), what, sdk::dtype_name(dt), sdk::dtype_name(t.dtype()));
  AXON_CHECK(t.rank() >= 0 && t.rank() <= AXON_MAX_RANK, "%s: %s has invalid rank %d", c.op(), what, t.rank());
  if (rank >= 0)
    AXON_CHECK(t.rank() == rank, "%s: %s must have rank %d, got shape %s", c.op(), what, rank, t.shape_string().c_str());
  for (int i = 0; i < t.rank(); ++i)
    AXON_CHECK(t.dim(i) >= 0, "%s: %s has a negative dimension %s", c.op(), what, t.shape_string().c_str());
  AXON_CHECK(t.numel() == 0 || t.raw() != nullptr, "%s: %s has no data", c.op(), what);
}

void want_shape(const KernelCall& c, const TensorRef& t, const char* what, const std::vector<int64_t>& dims) {
  bool same = t.rank() == static_cast<int>(dims.size());
  for (int i = 0; same && i < t.rank(); ++i) same = t.dim(i) == dims[i];
  if (same) return;
  std::string want = "[";
  for (size_t i = 0; i < dims.size(); ++i) (want += (i ? "," : "")) += std::to_string(dims[i]);
  want += "]";
  sdk::fail(AXON_INVALID_ARGUMENT, format("%s: %s has shape %s, expected %s", c.op(), what, t.shape_string().c_str(), want.c_str()));
}

void want_same_shape(const KernelCall& c, const TensorRef& t, const char* what, const TensorRef& like) {
  want_shape(c, t, what, std::vector<int64_t>(like.c().dims, like.c().dims + like.rank()));
}

namespace {

struct Axis {
  int64_t out, pad;
};

Axis axis(const KernelCall& c, const char* name, int64_t in, int64_t k, int64_t stride, int64_t dilation, axon_padding p) {
  AXON_CHECK(k >= 1, "%s: %s window size must be >= 1, got %lld", c.op(), name, static_cast<long long>(k));
  int64_t eff = (k - 1) * dilation + 1;
  if (p == AXON_PADDING_VALID) {
    AXON_CHECK(in >= eff, "%s: %s window %lld (dilated %lld) is larger than the input %lld with VALID padding", c.op(),
                              name, static_cast<long long>(k), static_cast<long long>(eff), static_cast<long long>(in));
    return {(in - eff) / stride + 1, 0};
  }
  int64_t out = (in + stride - 1) / stride;
  return {out, std::max<int64_t>((out - 1) * stride + eff - in, 0) / 2};
}

// Any int may cross the C ABI in an enum field, and reading one outside the
// enumerators as the C++ enum is undefined: the bytes are read as an int.
axon_padding padding_of(const KernelCall& c, const axon_padding& field) {
  int raw = 0;
  static_assert(sizeof raw == sizeof field);
  std::memcpy(&raw, &field, sizeof raw);
  AXON_CHECK(raw == AXON_PADDING_VALID || raw == AXON_PADDING_SAME, "%s: unknown padding %d", c.op(), raw);
  return static_cast<axon_padding>(raw);
}

}  // namespace

ConvGeom conv_geometry(const KernelCall& c, const TensorRef& x, const TensorRef& f) {
  return conv_geometry(c, c.attrs<axon_conv2d_attrs>(AXON_STRUCT_SIZE(axon_conv2d_attrs, padding)), x, f);
}

ConvGeom conv_geometry(const KernelCall& c, const axon_conv2d_attrs& a, const TensorRef& x, const TensorRef& f) {
  AXON_CHECK(a.struct_size >= AXON_STRUCT_SIZE(axon_conv2d_attrs, padding),
             "%s: attribute struct too small (conv attributes: %zu < %zu bytes)", c.op(), a.struct_size,
             AXON_STRUCT_SIZE(axon_conv2d_attrs, padding));
  AXON_CHECK(a.stride_h >= 1 && a.stride_w >= 1, "%s: strides must be >= 1, got %d,%d", c.op(), a.stride_h, a.stride_w);
  AXON_CHECK(a.dilation_h >= 1 && a.dilation_w >= 1, "%s: dilations must be >= 1, got %d,%d", c.op(), a.dilation_h, a.dilation_w);
  const axon_padding padding = padding_of(c, a.padding);
  AXON_CHECK(f.dim(2) == x.dim(3), "%s: filter %s has %lld input channels, image %s has %lld", c.op(),
                                       f.shape_string().c_str(), static_cast<long long>(f.dim(2)),
                                       x.shape_string().c_str(), static_cast<long long>(x.dim(3)));
  ConvGeom g{};
  g.n = x.dim(0), g.h = x.dim(1), g.w = x.dim(2), g.c = x.dim(3);
  g.kh = f.dim(0), g.kw = f.dim(1), g.oc = f.dim(3);
  g.sh = a.stride_h, g.sw = a.stride_w, g.dh = a.dilation_h, g.dw = a.dilation_w;
  Axis ah = axis(c, "height", g.h, g.kh, g.sh, g.dh, padding);
  Axis aw = axis(c, "width", g.w, g.kw, g.sw, g.dw, padding);
  g.oh = ah.out, g.pad_h = ah.pad, g.ow = aw.out, g.pad_w = aw.pad;
  return g;
}

PoolGeom pool_geometry(const KernelCall& c, const TensorRef& x) {
  const auto& a = c.attrs<axon_pool_attrs>(AXON_STRUCT_SIZE(axon_pool_attrs, padding));
  return pool_geometry(c, a, x.dim(0), x.dim(1), x.dim(2), x.dim(3));
}

PoolGeom pool_geometry(const KernelCall& c, const axon_pool_attrs& a, int64_t n, int64_t h, int64_t w, int64_t ch) {
  AXON_CHECK(a.stride_h >= 1 && a.stride_w >= 1, "%s: strides must be >= 1, got %d,%d", c.op(), a.stride_h, a.stride_w);
  const axon_padding padding = padding_of(c, a.padding);
  PoolGeom p{};
  p.n = n, p.h = h, p.w = w, p.c = ch;
  p.kh = a.window_h, p.kw = a.window_w, p.sh = a.stride_h, p.sw = a.stride_w;
  Axis ah = axis(c, "height", p.h, p.kh, p.sh, 1, padding);
  Axis aw = axis(c, "width", p.w, p.kw, p.sw, 1, padding);
  p.oh = ah.out, p.pad_h = ah.pad, p.ow = aw.out, p.pad_w = aw.pad;
  return p;
}

}  // namespace axon::cpu
