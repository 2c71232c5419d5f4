// Float32 kernels on host memory. Each is registered behind the op table's
// validator (validated_kernel): its rules (counts, dtypes, shapes, attributes),
// the same the host applies before every call, are checked before the kernel
// runs, so a bad call from anywhere fails with AXON_INVALID_ARGUMENT naming
// the op and the tensor, and a kernel holds only its arithmetic. Each
// computes before it returns: this device has no queue, so no error is ever
// pending.
#include "kernels.hpp"

#include <cstring>

namespace toy {
namespace {

using namespace axon::sdk;

// Relu: x -> y.
void relu(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
}

// ReluGrad: dy, y -> dx (dy where y > 0, else 0).
void relu_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) out[i] = yp[i] > 0.0f ? g[i] : 0.0f;
}

// BiasAdd: x [..., C], bias [C] -> y; y may be x.
void bias_add(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), bias = c.input(1), y = c.output(0);
  const int64_t channels = bias.dim(0);
  const float* xp = x.data<float>();
  const float* bp = bias.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] + bp[i % channels];
}

// MatMul: a, b -> c = op(a) op(b), op transposing where the attrs say;
// summed in double so the result is float32's rounding of the exact sum.
void mat_mul(Device&, const KernelCall& c) {
  TensorRef a = c.input(0), b = c.input(1), out = c.output(0);
  const auto& attrs = c.attrs<axon_matmul_attrs>(AXON_STRUCT_SIZE(axon_matmul_attrs, transpose_b));
  const bool ta = attrs.transpose_a != 0, tb = attrs.transpose_b != 0;
  const int64_t m = out.dim(0), n = out.dim(1), k = ta ? a.dim(0) : a.dim(1);
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
  TensorRef x = c.input(0), y = c.output(0);
  const float alpha = c.attrs<axon_scale_attrs>(AXON_STRUCT_SIZE(axon_scale_attrs, alpha)).alpha;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = alpha * xp[i];
}

// Fill: -> y, every element the value.
void fill(Device&, const KernelCall& c) {
  TensorRef y = c.output(0);
  const float value = c.attrs<axon_fill_attrs>(AXON_STRUCT_SIZE(axon_fill_attrs, value)).value;
  float* yp = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = value;
}

// Identity: x -> y, a copy; y may be x. The table lets Identity take any
// dtype, so the copy is sized by the dtype, not by float.
void identity(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const size_t bytes = static_cast<size_t>(x.numel()) * dtype_size(x.dtype());
  if (bytes > 0 && x.raw() != y.raw()) std::memmove(y.raw(), x.raw(), bytes);
}

// The kernels need nothing from the device, so they take the SDK's base class;
// a device with a queue would take its own class and enqueue there. Float32
// only (add_validated would register every dtype the op table allows).
template <axon::OpId Op, void (*F)(Device&, const KernelCall&)>
void add(KernelTable& t) {
  t.add(axon::op_schema(Op).name, AXON_FLOAT32, &validated_kernel<Op, Device, F>);
}

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    using axon::OpId;
    KernelTable t;
    add<OpId::Relu, relu>(t);
    add<OpId::ReluGrad, relu_grad>(t);
    add<OpId::BiasAdd, bias_add>(t);
    add<OpId::MatMul, mat_mul>(t);
    add<OpId::Scale, scale>(t);
    add<OpId::Fill, fill>(t);
    add<OpId::Identity, identity>(t);
    return t;
  }();
  return table;
}

}  // namespace toy
