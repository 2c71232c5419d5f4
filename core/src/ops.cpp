// Typed op wrappers. Each one names its op by OpId and hands dispatch the
// tensors and attributes; `call` checks at compile time that the counts and
// the attribute struct are those of the op's row in the op table.
#include <axon/ops.hpp>

#include <array>
#include <cstddef>

namespace axon::ops {
namespace {

template <class... T>
std::array<const Tensor*, sizeof...(T)> in(const T*... t) {
  return {t...};
}
template <class... T>
std::array<Tensor*, sizeof...(T)> out(T*... t) {
  return {t...};
}

template <OpId id, size_t NI, size_t NO, class A = std::nullptr_t>
void call(const std::string& layer, const std::array<const Tensor*, NI>& inputs, const std::array<Tensor*, NO>& outputs,
          const A* attrs = nullptr) {
  constexpr const OpSchema& s = op_schema(id);
  static_assert(static_cast<int>(NI) >= s.min_inputs && (s.max_inputs < 0 || static_cast<int>(NI) <= s.max_inputs),
                "input count differs from the op table");
  static_assert(static_cast<int>(NO) >= s.min_outputs && static_cast<int>(NO) <= s.max_outputs,
                "output count differs from the op table");
  static_assert(attr_kind_of<A>::value == s.attrs, "attribute struct differs from the op table");
  OpCall c;
  c.op = id;
  c.layer = layer;
  c.inputs = inputs;
  c.outputs = outputs;
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
  call<OpId::Conv2D>(layer, in(&x, &filter), out(&y), &a);
}
void conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                           const std::string& layer) {
  call<OpId::Conv2DBackpropInput>(layer, in(&dy, &filter), out(&dx), &a);
}
void conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                            const std::string& layer) {
  call<OpId::Conv2DBackpropFilter>(layer, in(&x, &dy), out(&dfilter), &a);
}
void max_pool(const Tensor& x, Tensor& y, const axon_pool_attrs& a, const std::string& layer) {
  call<OpId::MaxPool>(layer, in(&x), out(&y), &a);
}
void max_pool_grad(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor& dx, const axon_pool_attrs& a,
                   const std::string& layer) {
  call<OpId::MaxPoolGrad>(layer, in(&x, &y, &dy), out(&dx), &a);
}
void relu(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Relu>(layer, in(&x), out(&y)); }
void relu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer) {
  call<OpId::ReluGrad>(layer, in(&dy, &y), out(&dx));
}
void matmul(const Tensor& a, const Tensor& b, Tensor& c, bool transpose_a, bool transpose_b, const std::string& layer) {
  axon_matmul_attrs at{};
  at.struct_size = sizeof at;
  at.transpose_a = transpose_a ? 1 : 0;
  at.transpose_b = transpose_b ? 1 : 0;
  call<OpId::MatMul>(layer, in(&a, &b), out(&c), &at);
}
void bias_add(const Tensor& x, const Tensor& bias, Tensor& y, const std::string& layer) {
  call<OpId::BiasAdd>(layer, in(&x, &bias), out(&y));
}
void bias_add_grad(const Tensor& dy, Tensor& dbias, const std::string& layer) {
  call<OpId::BiasAddGrad>(layer, in(&dy), out(&dbias));
}
void sparse_softmax_cross_entropy(const Tensor& logits, const Tensor& labels, Tensor& loss, Tensor& dlogits,
                                  const std::string& layer) {
  call<OpId::SparseSoftmaxCrossEntropyWithLogits>(layer, in(&logits, &labels), out(&loss, &dlogits));
}
void apply_adam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, const axon_adam_attrs& a,
                const std::string& layer) {
  call<OpId::ApplyAdam>(layer, in(&var, &m, &v, &grad), std::array<Tensor*, 0>{}, &a);
}
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer) {
  call<OpId::InTopK>(layer, in(&logits, &labels), out(&correct));
}
void sum(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Sum>(layer, in(&x), out(&y)); }
void fill(Tensor& y, float value, const std::string& layer) {
  axon_fill_attrs a{};
  a.struct_size = sizeof a;
  a.value = value;
  call<OpId::Fill>(layer, std::array<const Tensor*, 0>{}, out(&y), &a);
}
void scale(const Tensor& x, Tensor& y, float alpha, const std::string& layer) {
  axon_scale_attrs a{};
  a.struct_size = sizeof a;
  a.alpha = alpha;
  call<OpId::Scale>(layer, in(&x), out(&y), &a);
}
void add_n(const std::vector<const Tensor*>& xs, Tensor& y, const std::string& layer) {
  // The one op with a run-time input count: validation checks it.
  Tensor* outputs[] = {&y};
  OpCall c;
  c.op = OpId::AddN;
  c.layer = layer;
  c.inputs = xs;
  c.outputs = outputs;
  run(c);
}
void normalize_image(const Tensor& x_uint8, Tensor& y, const std::string& layer) {
  call<OpId::NormalizeImage>(layer, in(&x_uint8), out(&y));
}
void identity(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Identity>(layer, in(&x), out(&y)); }

void fused_conv2d(const Tensor& x, const Tensor& filter, const Tensor& bias, Tensor& y, const axon_conv2d_attrs& a,
                  bool relu, const std::string& layer) {
  axon_fused_conv2d_attrs f{};
  f.struct_size = sizeof f;
  f.conv = a;
  f.activation = relu ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
  call<OpId::FusedConv2D>(layer, in(&x, &filter, &bias), out(&y), &f);
}
void fused_matmul(const Tensor& a, const Tensor& b, const Tensor& bias, Tensor& c, bool transpose_a, bool transpose_b,
                  bool relu, const std::string& layer) {
  axon_fused_matmul_attrs f{};
  f.struct_size = sizeof f;
  f.matmul.struct_size = sizeof f.matmul;
  f.matmul.transpose_a = transpose_a ? 1 : 0;
  f.matmul.transpose_b = transpose_b ? 1 : 0;
  f.activation = relu ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
  call<OpId::FusedMatMul>(layer, in(&a, &b, &bias), out(&c), &f);
}
void relu_grad_bias_add_grad(const Tensor& dy, const Tensor& y, Tensor& dx, Tensor& dbias, const std::string& layer) {
  call<OpId::FusedReluGradBiasAddGrad>(layer, in(&dy, &y), out(&dx, &dbias));
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
  call<OpId::FusedConv2DMaxPool>(layer, in(&x, &filter, &bias), out(&y, &argmax), &f);
}
void fused_conv2d_max_pool_grad(const Tensor& x, const Tensor& filter, const Tensor& dy, const Tensor& argmax,
                                Tensor& dfilter, Tensor& dbias, Tensor* dx, const axon_conv2d_attrs& conv, bool relu,
                                const axon_pool_attrs& pool, const std::string& layer) {
  const auto f = conv_pool_attrs(conv, relu, pool);
  if (dx != nullptr)
    call<OpId::FusedConv2DMaxPoolGrad>(layer, in(&x, &filter, &dy, &argmax), out(&dfilter, &dbias, dx), &f);
  else
    call<OpId::FusedConv2DMaxPoolGrad>(layer, in(&x, &filter, &dy, &argmax), out(&dfilter, &dbias), &f);
}

void sparse_categorical_accuracy(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer) {
  call<OpId::SparseCategoricalAccuracy>(layer, in(&logits, &labels), out(&correct));
}

}  // namespace axon::ops
