// Float32 kernels on host memory. Each checks what it is given and names the
// op and the shapes when they are wrong (AXON_INVALID_ARGUMENT), then computes
// before it returns: this device has no queue, so no error is ever pending.
#include "kernels.hpp"

#include <cstring>

namespace toy {
namespace {

using namespace axon::sdk;

void want_float(const KernelCall& c, const TensorRef& t, const char* what) {
  require(t.dtype() == AXON_FLOAT32, format("%s: %s must be float32, got %s", c.op(), what, dtype_name(t.dtype())));
  require(t.numel() == 0 || t.raw() != nullptr, format("%s: %s has no data", c.op(), what));
}

void want_same_shape(const KernelCall& c, const TensorRef& t, const char* what, const TensorRef& like) {
  bool same = t.rank() == like.rank();
  for (int i = 0; same && i < t.rank(); ++i) same = t.dim(i) == like.dim(i);
  require(same, format("%s: %s has shape %s, expected %s", c.op(), what, t.shape_string().c_str(),
                       like.shape_string().c_str()));
}

// Relu: x -> y.
void relu(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want_float(c, x, "features");
  want_float(c, y, "activations");
  want_same_shape(c, y, "activations", x);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
}

// ReluGrad: dy, y -> dx (dy where y > 0, else 0).
void relu_grad(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  want_float(c, dy, "gradients");
  want_float(c, y, "features");
  want_float(c, dx, "backprops");
  want_same_shape(c, y, "features", dy);
  want_same_shape(c, dx, "backprops", dy);
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) out[i] = yp[i] > 0.0f ? g[i] : 0.0f;
}

// BiasAdd: x [..., C], bias [C] -> y; y may be x.
void bias_add(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef x = c.input(0), bias = c.input(1), y = c.output(0);
  want_float(c, x, "value");
  want_float(c, bias, "bias");
  want_float(c, y, "output");
  require(x.rank() >= 2 && bias.rank() == 1 && bias.dim(0) == x.dim(-1),
          format("%s: bias %s must be 1-D and match the last dimension of value %s (at least 2-D)", c.op(),
                 bias.shape_string().c_str(), x.shape_string().c_str()));
  want_same_shape(c, y, "output", x);
  const int64_t channels = bias.dim(0);
  const float* xp = x.data<float>();
  const float* bp = bias.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] + bp[i % channels];
}

// MatMul: a, b -> c = op(a) op(b), op transposing where the attrs say;
// summed in double so the result is float32's rounding of the exact sum.
void mat_mul(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef a = c.input(0), b = c.input(1), out = c.output(0);
  want_float(c, a, "a");
  want_float(c, b, "b");
  want_float(c, out, "product");
  const auto& attrs = c.attrs<axon_matmul_attrs>(AXON_STRUCT_SIZE(axon_matmul_attrs, transpose_b));
  const bool ta = attrs.transpose_a != 0, tb = attrs.transpose_b != 0;
  require(a.rank() == 2 && b.rank() == 2 && out.rank() == 2,
          format("%s: a %s, b %s and product %s must be 2-D", c.op(), a.shape_string().c_str(),
                 b.shape_string().c_str(), out.shape_string().c_str()));
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  require((tb ? b.dim(1) : b.dim(0)) == k && out.dim(0) == m && out.dim(1) == n,
          format("%s: a %s%s times b %s%s does not give product %s", c.op(), a.shape_string().c_str(), ta ? "^T" : "",
                 b.shape_string().c_str(), tb ? "^T" : "", out.shape_string().c_str()));
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* cp = out.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(ta ? ap[p * m + i] : ap[i * k + p]) * double(tb ? bp[j * k + p] : bp[p * n + j]);
      cp[i * n + j] = static_cast<float>(sum);
    }
}

// Scale: x -> y = alpha * x; y may be x.
void scale(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want_float(c, x, "x");
  want_float(c, y, "y");
  want_same_shape(c, y, "y", x);
  const float alpha = c.attrs<axon_scale_attrs>(AXON_STRUCT_SIZE(axon_scale_attrs, alpha)).alpha;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = alpha * xp[i];
}

// Fill: -> y, every element the value.
void fill(Device&, const KernelCall& c) {
  c.expect_arity(0, 1);
  TensorRef y = c.output(0);
  want_float(c, y, "output");
  const float value = c.attrs<axon_fill_attrs>(AXON_STRUCT_SIZE(axon_fill_attrs, value)).value;
  float* yp = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = value;
}

// Identity: x -> y, a copy.
void identity(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want_float(c, x, "input");
  want_float(c, y, "output");
  want_same_shape(c, y, "output", x);
  if (x.numel() > 0 && x.raw() != y.raw()) std::memmove(y.raw(), x.raw(), static_cast<size_t>(x.numel()) * sizeof(float));
}

// The kernels need nothing from the device, so they take the SDK's base class;
// a device with a queue would take its own class and enqueue there.
template <void (*F)(Device&, const KernelCall&)>
constexpr axon_kernel_fn k = &kernel<Device, F>;

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.add("Relu", AXON_FLOAT32, k<relu>)
        .add("ReluGrad", AXON_FLOAT32, k<relu_grad>)
        .add("BiasAdd", AXON_FLOAT32, k<bias_add>)
        .add("MatMul", AXON_FLOAT32, k<mat_mul>)
        .add("Scale", AXON_FLOAT32, k<scale>)
        .add("Fill", AXON_FLOAT32, k<fill>)
        .add("Identity", AXON_FLOAT32, k<identity>);
    return t;
  }();
  return table;
}

}  // namespace toy
