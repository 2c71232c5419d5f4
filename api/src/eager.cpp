// Eager ops: each one places its op as dispatch would (scope, priority,
// fallback), allocates the output there and runs the core's typed wrapper.
#include "context.hpp"

#include <axon/api/eager.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

#include <algorithm>
#include <array>
#include <cstdio>

namespace axon {
namespace {

using api_detail::runtime;

// Where `op` on `inputs` runs: dispatch's own placement (it logs a fallback).
Device& placed(OpId op, std::span<const Tensor* const> inputs) {
  runtime();
  OpCall call;
  call.op = op;
  call.inputs = inputs;
  return place(call);
}

template <size_t N>
Tensor output_for(OpId op, const std::array<const Tensor*, N>& inputs, const Shape& shape,
                  axon_dtype dtype = AXON_FLOAT32) {
  return Tensor(placed(op, inputs), dtype, shape);
}

void check_defined(const Tensor& t, const char* op) {
  if (!t.defined()) throw UsageError(std::string(op) + ": the tensor is empty (default-constructed)");
}

// TensorFlow's words for a shape mismatch, naming both shapes.
void check_same_shape(const Tensor& a, const Tensor& b, const char* op) {
  check_defined(a, op);
  check_defined(b, op);
  if (a.shape() != b.shape())
    throw UsageError(std::string(op) + ": incompatible shapes: " + shape_string(a.shape()) + " vs. " +
                     shape_string(b.shape()));
}

axon_padding padding_of(const std::string& padding, const char* op) {
  if (padding == "VALID" || padding == "valid") return AXON_PADDING_VALID;
  if (padding == "SAME" || padding == "same") return AXON_PADDING_SAME;
  throw UsageError(std::string(op) + ": padding must be \"VALID\" or \"SAME\", got \"" + padding + "\"");
}

template <class T>
Tensor constant_of(const std::vector<T>& values, const Shape& shape, axon_dtype dtype) {
  if (static_cast<int64_t>(values.size()) != numel(shape))
    throw UsageError("constant: " + std::to_string(values.size()) + " values do not fill shape " +
                     shape_string(shape) + " (" + std::to_string(numel(shape)) + " elements)");
  return Tensor::from_vector<T>(api_detail::current_device(), dtype, shape, values);
}

}  // namespace

DeviceContext::DeviceContext(const std::string& name) {
  Runtime& rt = runtime();
  const DeviceSpec spec = parse_device_spec(name);  // UsageError for a malformed name
  if (Device* d = rt.find_device(name)) {
    device_ = d;
    scope_ = std::make_unique<DeviceScope>(*d);
    return;
  }
  // A device that is not there: soft placement runs on the CPU (as
  // TensorFlow does), unless no plugin even offers the type (a typo).
  std::string list;
  for (const Device* d : rt.devices()) list += (list.empty() ? "" : ", ") + d->name();
  const std::string missing = spec.canonical() + " is not available (" + rt.why_no_device(spec.type) + ")";
  bool known_type = spec.type == "GPU";
  for (const PluginInfo& p : rt.plugins()) known_type = known_type || p.device_type == spec.type;
  if (!known_type || rt.config().strict_placement || rt.cpu_device() == nullptr)
    throw UsageError("device(\"" + name + "\"): " + missing + "; devices: " + (list.empty() ? "(none)" : list));
  log::warning("placement", "device(\"" + name + "\"): " + missing + "; running on " + rt.cpu_device()->name() +
                                " instead (soft placement)");
  device_ = rt.cpu_device();
  scope_ = std::make_unique<DeviceScope>(*device_);
}

DeviceContext::~DeviceContext() = default;

DeviceContext device(const std::string& name) { return DeviceContext(name); }

Tensor constant(std::initializer_list<float> values, const Shape& shape) {
  return constant_of(std::vector<float>(values), shape, AXON_FLOAT32);
}
Tensor constant(const std::vector<float>& values, const Shape& shape) { return constant_of(values, shape, AXON_FLOAT32); }
Tensor constant(const std::vector<int32_t>& values, const Shape& shape) {
  return constant_of(values, shape, AXON_INT32);
}
Tensor constant(float value) { return constant_of(std::vector<float>{value}, {}, AXON_FLOAT32); }

Tensor fill(const Shape& shape, float value) {
  Tensor y = output_for<0>(OpId::Fill, {}, shape);
  ops::fill(y, value);
  return y;
}
Tensor zeros(const Shape& shape) { return fill(shape, 0.0f); }
Tensor ones(const Shape& shape) { return fill(shape, 1.0f); }

Tensor add(const Tensor& a, const Tensor& b) {
  check_same_shape(a, b, "add");
  Tensor y = output_for<2>(OpId::AddN, {&a, &b}, a.shape());
  ops::add_n({&a, &b}, y);
  return y;
}

Tensor subtract(const Tensor& a, const Tensor& b) {
  check_same_shape(a, b, "subtract");
  Tensor y = output_for<2>(OpId::Sub, {&a, &b}, a.shape());
  ops::sub(a, b, y);
  return y;
}

Tensor multiply(const Tensor& a, const Tensor& b) {
  check_same_shape(a, b, "multiply");
  Tensor y = output_for<2>(OpId::Mul, {&a, &b}, a.shape());
  ops::mul(a, b, y);
  return y;
}

Tensor maximum(const Tensor& a, const Tensor& b) {
  check_same_shape(a, b, "maximum");
  Tensor y = output_for<2>(OpId::Maximum, {&a, &b}, a.shape());
  ops::maximum(a, b, y);
  return y;
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  check_defined(a, "matmul");
  check_defined(b, "matmul");
  if (a.rank() != 2 || b.rank() != 2)
    throw UsageError("matmul: both operands must be matrices, got " + shape_string(a.shape()) + " and " +
                     shape_string(b.shape()));
  const int64_t m = transpose_a ? a.dim(1) : a.dim(0), ka = transpose_a ? a.dim(0) : a.dim(1);
  const int64_t kb = transpose_b ? b.dim(1) : b.dim(0), n = transpose_b ? b.dim(0) : b.dim(1);
  if (ka != kb)
    throw UsageError("matmul: incompatible shapes: " + shape_string(a.shape()) + " vs. " + shape_string(b.shape()) +
                     " (inner dimensions " + std::to_string(ka) + " and " + std::to_string(kb) + ")");
  Tensor y = output_for<2>(OpId::MatMul, {&a, &b}, {m, n});
  ops::matmul(a, b, y, transpose_a, transpose_b);
  return y;
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  check_defined(x, "reshape");
  return x.reshaped(shape);
}

namespace {

// Row-major values as nested brackets, NumPy's layout: "[[1 2]\n [3 4]]".
template <class T>
void nest(std::string& out, const std::vector<T>& v, const Shape& shape, size_t dim, int64_t& at) {
  if (dim == shape.size()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", static_cast<double>(v[static_cast<size_t>(at++)]));
    out += buf;
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0 && dim + 1 == shape.size()) out += ' ';
    if (i > 0 && dim + 1 < shape.size()) out.append("\n").append(dim + 1, ' ');
    nest(out, v, shape, dim + 1, at);
  }
  out += ']';
}

}  // namespace

std::string to_string(const Tensor& t) {
  if (!t.defined()) return "axon.Tensor(<empty>)";
  std::string values;
  int64_t at = 0;
  if (t.dtype() == AXON_FLOAT32)
    nest(values, t.to_vector<float>(), t.shape(), 0, at);
  else if (t.dtype() == AXON_INT32)
    nest(values, t.to_vector<int32_t>(), t.shape(), 0, at);
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  shape += t.shape().size() == 1 ? ",)" : ")";
  // Appended piecewise: GCC 12's -Wrestrict misfires on "literal" + temporary.
  std::string out = "axon.Tensor(";
  if (!values.empty()) out.append(t.rank() > 1 ? "\n" : "").append(values).append(", ");
  out.append("shape=").append(shape).append(", dtype=").append(dtype_name(t.dtype()));
  out.append(", device=").append(t.device().name()).append(")");
  return out;
}

namespace math {
Tensor reduce_sum(const Tensor& x) {
  check_defined(x, "reduce_sum");
  Tensor y = output_for<1>(OpId::Sum, {&x}, {});
  ops::sum(x, y);
  return y;
}

namespace {

// TensorFlow's reduce_* over `axis` on the op table's reduction `op`: the axes
// checked here against x's shape (so the message names it), y's shape worked
// out, the op placed and run.
Tensor reduce(OpId op, const char* name, const Tensor& x, const std::vector<int>& axis, bool keepdims) {
  check_defined(x, name);
  const int rank = x.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int a : axis) {
    const int k = a < 0 ? a + rank : a;
    if (k < 0 || k >= rank)
      throw UsageError(std::string(name) + ": axis " + std::to_string(a) + " is out of range for shape " +
                       shape_string(x.shape()));
    if (reduced[static_cast<size_t>(k)])
      throw UsageError(std::string(name) + ": axis " + std::to_string(a) + " is given twice");
    reduced[static_cast<size_t>(k)] = true;
  }
  Shape shape;
  for (int i = 0; i < rank; ++i)
    if (!reduced[static_cast<size_t>(i)] || keepdims) shape.push_back(reduced[static_cast<size_t>(i)] ? 1 : x.dim(i));
  Tensor y = output_for<1>(op, {&x}, shape);
  const axon_reduce_attrs a = ops::reduce_attrs(axis, keepdims);
  if (op == OpId::ReduceSum)
    ops::reduce_sum(x, y, a);
  else if (op == OpId::Mean)
    ops::mean(x, y, a);
  else
    ops::max(x, y, a);
  return y;
}

std::vector<int> all_axes(const Tensor& x) {
  std::vector<int> axes(static_cast<size_t>(x.rank()));
  for (int i = 0; i < x.rank(); ++i) axes[static_cast<size_t>(i)] = i;
  return axes;
}

}  // namespace

Tensor reduce_sum(const Tensor& x, const std::vector<int>& axis, bool keepdims) {
  return reduce(OpId::ReduceSum, "reduce_sum", x, axis, keepdims);
}
Tensor reduce_mean(const Tensor& x) {
  check_defined(x, "reduce_mean");
  return reduce(OpId::Mean, "reduce_mean", x, all_axes(x), false);
}
Tensor reduce_mean(const Tensor& x, const std::vector<int>& axis, bool keepdims) {
  return reduce(OpId::Mean, "reduce_mean", x, axis, keepdims);
}
Tensor reduce_max(const Tensor& x) {
  check_defined(x, "reduce_max");
  return reduce(OpId::Max, "reduce_max", x, all_axes(x), false);
}
Tensor reduce_max(const Tensor& x, const std::vector<int>& axis, bool keepdims) {
  return reduce(OpId::Max, "reduce_max", x, axis, keepdims);
}
}  // namespace math

namespace nn {

Tensor relu(const Tensor& x) {
  check_defined(x, "relu");
  Tensor y = output_for<1>(OpId::Relu, {&x}, x.shape());
  ops::relu(x, y);
  return y;
}

Tensor sigmoid(const Tensor& x) {
  check_defined(x, "sigmoid");
  Tensor y = output_for<1>(OpId::Sigmoid, {&x}, x.shape());
  ops::sigmoid(x, y);
  return y;
}

Tensor tanh(const Tensor& x) {
  check_defined(x, "tanh");
  Tensor y = output_for<1>(OpId::Tanh, {&x}, x.shape());
  ops::tanh(x, y);
  return y;
}

Tensor softmax(const Tensor& logits) {
  check_defined(logits, "softmax");
  Tensor y = output_for<1>(OpId::Softmax, {&logits}, logits.shape());
  ops::softmax(logits, y);
  return y;
}

Tensor conv2d(const Tensor& x, const Tensor& filters, std::pair<int, int> strides, const std::string& padding) {
  check_defined(x, "conv2d");
  check_defined(filters, "conv2d");
  if (x.rank() != 4 || filters.rank() != 4 || x.dim(3) != filters.dim(2))
    throw UsageError("conv2d: incompatible shapes: input " + shape_string(x.shape()) + " (NHWC) vs. filters " +
                     shape_string(filters.shape()) + " (HWIO: the input's channels are dimension 2)");
  const axon_conv2d_attrs a = ops::conv2d_attrs(strides.first, strides.second, 1, 1, padding_of(padding, "conv2d"));
  const ConvGeometry g = conv_geometry(a, x.shape().data(), filters.shape().data());
  Tensor y = output_for<2>(OpId::Conv2D, {&x, &filters}, {g.n, g.oh, g.ow, g.oc});
  ops::conv2d(x, filters, y, a);
  return y;
}

Tensor max_pool2d(const Tensor& x, std::pair<int, int> ksize, std::pair<int, int> strides, const std::string& padding) {
  check_defined(x, "max_pool2d");
  if (x.rank() != 4) throw UsageError("max_pool2d: the input must be NHWC, got shape " + shape_string(x.shape()));
  const axon_pool_attrs a =
      ops::pool_attrs(ksize.first, ksize.second, strides.first, strides.second, padding_of(padding, "max_pool2d"));
  const PoolGeometry g = pool_geometry(a, x.dim(0), x.dim(1), x.dim(2), x.dim(3));
  Tensor y = output_for<1>(OpId::MaxPool, {&x}, {g.n, g.oh, g.ow, g.c});
  ops::max_pool(x, y, a);
  return y;
}

Tensor bias_add(const Tensor& x, const Tensor& bias) {
  check_defined(x, "bias_add");
  check_defined(bias, "bias_add");
  if (bias.rank() != 1 || x.rank() < 1 || x.dim(-1) != bias.dim(0))
    throw UsageError("bias_add: incompatible shapes: " + shape_string(x.shape()) + " vs. bias " +
                     shape_string(bias.shape()) + " (the bias must match the last dimension)");
  Tensor y = output_for<2>(OpId::BiasAdd, {&x, &bias}, x.shape());
  ops::bias_add(x, bias, y);
  return y;
}

}  // namespace nn
}  // namespace axon
