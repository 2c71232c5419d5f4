// Typed op wrappers: build the OpCall (and attrs) and hand it to dispatch.
#include <axon/ops.hpp>

namespace axon::ops {
namespace {

void call(const char* op, const std::string& layer, std::vector<const Tensor*> in, std::vector<Tensor*> out,
          const void* attrs = nullptr) {
  OpCall c;
  c.op = op;
  c.layer = layer;
  c.inputs = std::move(in);
  c.outputs = std::move(out);
  c.attrs = attrs;
  run(c);
}

}  // namespace

axon_conv2d_attrs conv2d_attrs(int stride, axon_padding padding) {
  axon_conv2d_attrs a{};
  a.struct_size = sizeof a;
  a.stride_h = a.stride_w = stride;
  a.dilation_h = a.dilation_w = 1;
  a.padding = padding;
  return a;
}

axon_pool_attrs pool_attrs(int window, int stride, axon_padding padding) {
  axon_pool_attrs a{};
  a.struct_size = sizeof a;
  a.window_h = a.window_w = window;
  a.stride_h = a.stride_w = stride;
  a.padding = padding;
  return a;
}

void conv2d(const Tensor& x, const Tensor& filter, Tensor& y, const axon_conv2d_attrs& a, const std::string& layer) {
  call("Conv2D", layer, {&x, &filter}, {&y}, &a);
}
void conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                           const std::string& layer) {
  call("Conv2DBackpropInput", layer, {&dy, &filter}, {&dx}, &a);
}
void conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                            const std::string& layer) {
  call("Conv2DBackpropFilter", layer, {&x, &dy}, {&dfilter}, &a);
}
void max_pool(const Tensor& x, Tensor& y, const axon_pool_attrs& a, const std::string& layer) {
  call("MaxPool", layer, {&x}, {&y}, &a);
}
void max_pool_grad(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx, const axon_pool_attrs& a,
                   const std::string& layer) {
  call("MaxPoolGrad", layer, {&x, &y, &dy}, {&dx}, &a);
}
void relu(const Tensor& x, Tensor& y, const std::string& layer) { call("Relu", layer, {&x}, {&y}); }
void relu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer) {
  call("ReluGrad", layer, {&dy, &y}, {&dx});
}
void matmul(const Tensor& a, const Tensor& b, Tensor& c, bool transpose_a, bool transpose_b, const std::string& layer) {
  axon_matmul_attrs at{};
  at.struct_size = sizeof at;
  at.transpose_a = transpose_a ? 1 : 0;
  at.transpose_b = transpose_b ? 1 : 0;
  call("MatMul", layer, {&a, &b}, {&c}, &at);
}
void bias_add(const Tensor& x, const Tensor& bias, Tensor& y, const std::string& layer) {
  call("BiasAdd", layer, {&x, &bias}, {&y});
}
void bias_add_grad(const Tensor& dy, Tensor& dbias, const std::string& layer) {
  call("BiasAddGrad", layer, {&dy}, {&dbias});
}
void sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Tensor& loss, Tensor& dlogits,
                                  const std::string& layer) {
  call("SparseSoftmaxCrossEntropyWithLogits", layer, {&logits, &labels}, {&loss, &dlogits});
}
void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, const axon_adam_attrs& a,
                const std::string& layer) {
  call("ApplyAdam", layer, {&var, &m, &v, &grad}, {}, &a);
}
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer) {
  call("InTopK", layer, {&logits, &labels}, {&correct});
}
void sum(const Tensor& x, Tensor& y, const std::string& layer) { call("Sum", layer, {&x}, {&y}); }
void fill(Tensor& y, float value, const std::string& layer) {
  axon_fill_attrs a{};
  a.struct_size = sizeof a;
  a.value = value;
  call("Fill", layer, {}, {&y}, &a);
}
void scale(const Tensor& x, Tensor& y, float alpha, const std::string& layer) {
  axon_scale_attrs a{};
  a.struct_size = sizeof a;
  a.alpha = alpha;
  call("Scale", layer, {&x}, {&y}, &a);
}
void add_n(const std::vector<const Tensor*>& xs, Tensor& y, const std::string& layer) { call("AddN", layer, xs, {&y}); }
void normalize_image(const Tensor& x_uint8, Tensor& y, const std::string& layer) {
  call("NormalizeImage", layer, {&x_uint8}, {&y});
}
void identity(const Tensor& x, Tensor& y, const std::string& layer) { call("Identity", layer, {&x}, {&y}); }

void fused_conv2d(const Tensor& x, const Tensor& filter, const Tensor& bias, Tensor& y, const axon_conv2d_attrs& a,
                  bool relu, const std::string& layer) {
  axon_fused_conv2d_attrs f{};
  f.struct_size = sizeof f;
  f.conv = a;
  f.activation = relu ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
  call("_FusedConv2D", layer, {&x, &filter, &bias}, {&y}, &f);
}
void fused_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& c, bool transpose_a, bool transpose_b,
                  bool relu, const std::string& layer) {
  axon_fused_matmul_attrs f{};
  f.struct_size = sizeof f;
  f.matmul.struct_size = sizeof f.matmul;
  f.matmul.transpose_a = transpose_a ? 1 : 0;
  f.matmul.transpose_b = transpose_b ? 1 : 0;
  f.activation = relu ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
  call("_FusedMatMul", layer, {&a, &b, &bias}, {&c}, &f);
}
void relu_grad_bias_add_grad(const Tensor& dy, const Tensor& y, Tensor& dx, Tensor& dbias, const std::string& layer) {
  call("_FusedReluGradBiasAddGrad", layer, {&dy, &y}, {&dx, &dbias});
}

namespace {
axon_fused_conv2d_max_pool_attrs conv_pool_attrs(const axon_conv2d_attrs& conv, bool relu, const axon_pool_attrs& pool) {
  axon_fused_conv2d_max_pool_attrs f{};
  f.struct_size = sizeof f;
  f.conv = conv;
  f.activation = relu ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
  f.pool = pool;
  return f;
}
}  // namespace

void fused_conv2d_max_pool(const Tensor& x, const Tensor& filter, const Tensor& bias, Tensor& y, Tensor& argmax,
                           const axon_conv2d_attrs& conv, bool relu, const axon_pool_attrs& pool,
                           const std::string& layer) {
  const auto f = conv_pool_attrs(conv, relu, pool);
  call("_FusedConv2DMaxPool", layer, {&x, &filter, &bias}, {&y, &argmax}, &f);
}
void fused_conv2d_max_pool_grad(const Tensor& x, const Tensor& filter, const Tensor& dy, const Tensor& argmax,
                                Tensor& dfilter, Tensor& dbias, Tensor* dx, const axon_conv2d_attrs& conv, bool relu,
                                const axon_pool_attrs& pool, const std::string& layer) {
  const auto f = conv_pool_attrs(conv, relu, pool);
  if (dx != nullptr)
    call("_FusedConv2DMaxPoolGrad", layer, {&x, &filter, &dy, &argmax}, {&dfilter, &dbias, dx}, &f);
  else
    call("_FusedConv2DMaxPoolGrad", layer, {&x, &filter, &dy, &argmax}, {&dfilter, &dbias}, &f);
}

void sparse_categorical_accuracy(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer) {
  call("_SparseCategoricalAccuracy", layer, {&logits, &labels}, {&correct});
}

}  // namespace axon::ops
