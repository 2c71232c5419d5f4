// Typed op wrappers. Each one names its op by OpId and hands dispatch the
// tensors and attributes; `call` checks at compile time that the counts and
// the attribute struct are those of the op's row in the op table.
#include <axon/error.hpp>
#include <axon/ops.hpp>

#include <array>
#include <cstddef>
#include <string>

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
void conv2d_backprop_input_accumulate(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                                      const std::string& layer) {
  call<OpId::Conv2DBackpropInputAccumulate>(layer, in(&dx, &dy, &filter), std::array<Tensor*, 0>{}, &a);
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
void apply_sgd(Tensor& var, Tensor& velocity, const Tensor& grad, const axon_sgd_attrs& a, const std::string& layer) {
  call<OpId::ApplySGD>(layer, in(&var, &velocity, &grad), std::array<Tensor*, 0>{}, &a);
}
void apply_rmsprop(Tensor& var, Tensor& velocity, Tensor& momentum, Tensor& average_grad, const Tensor& grad,
                   const axon_rmsprop_attrs& a, const std::string& layer) {
  call<OpId::ApplyRMSprop>(layer, in(&var, &velocity, &momentum, &average_grad, &grad), std::array<Tensor*, 0>{}, &a);
}
void apply_adam_with_amsgrad(Tensor& var, Tensor& m, Tensor& v, Tensor& vhat, const Tensor& grad,
                             const axon_adam_attrs& a, const std::string& layer) {
  call<OpId::ApplyAdamWithAmsgrad>(layer, in(&var, &m, &v, &vhat, &grad), std::array<Tensor*, 0>{}, &a);
}
void apply_adagrad(Tensor& var, Tensor& accumulator, const Tensor& grad, const axon_adagrad_attrs& a,
                   const std::string& layer) {
  call<OpId::ApplyAdagrad>(layer, in(&var, &accumulator, &grad), std::array<Tensor*, 0>{}, &a);
}
void apply_nadam(Tensor& var, Tensor& m, Tensor& v, const Tensor& grad, const axon_nadam_attrs& a,
                 const std::string& layer) {
  call<OpId::ApplyNadam>(layer, in(&var, &m, &v, &grad), std::array<Tensor*, 0>{}, &a);
}
void apply_weight_decay(Tensor& var, const axon_weight_decay_attrs& a, const std::string& layer) {
  call<OpId::ApplyWeightDecay>(layer, in(&var), std::array<Tensor*, 0>{}, &a);
}
void clip_gradients(Tensor& grad, const Tensor& segment_ends, const axon_clip_attrs& a, const std::string& layer) {
  call<OpId::ClipGradients>(layer, in(&grad, &segment_ends), std::array<Tensor*, 0>{}, &a);
}
void categorical_crossentropy(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                              const axon_crossentropy_attrs& a, const std::string& layer) {
  call<OpId::CategoricalCrossentropy>(layer, in(&predictions, &labels), out(&loss, &dpredictions), &a);
}
void binary_crossentropy(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                         const axon_crossentropy_attrs& a, const std::string& layer) {
  call<OpId::BinaryCrossentropy>(layer, in(&predictions, &labels), out(&loss, &dpredictions), &a);
}
void regression_loss(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& dpredictions,
                     const axon_regression_loss_attrs& a, const std::string& layer) {
  call<OpId::RegressionLoss>(layer, in(&predictions, &labels), out(&loss, &dpredictions), &a);
}
void binary_accuracy(const Tensor& predictions, const Tensor& labels, Tensor& correct,
                     const axon_binary_accuracy_attrs& a, const std::string& layer) {
  call<OpId::BinaryAccuracy>(layer, in(&predictions, &labels), out(&correct), &a);
}
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, const std::string& layer) {
  call<OpId::InTopK>(layer, in(&logits, &labels), out(&correct));
}
void in_top_k(const Tensor& logits, const Tensor& labels, Tensor& correct, int k, const std::string& layer) {
  axon_in_top_k_attrs a{};
  a.struct_size = AXON_STRUCT_SIZE(axon_in_top_k_attrs, k);
  a.k = k;
  call<OpId::InTopKV2>(layer, in(&logits, &labels), out(&correct), &a);
}
void sum(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Sum>(layer, in(&x), out(&y)); }
void reduce_sum(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer) {
  call<OpId::ReduceSum>(layer, in(&x), out(&y), &a);
}
void mean(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer) {
  call<OpId::Mean>(layer, in(&x), out(&y), &a);
}
void max(const Tensor& x, Tensor& y, const axon_reduce_attrs& a, const std::string& layer) {
  call<OpId::Max>(layer, in(&x), out(&y), &a);
}
axon_reduce_attrs reduce_attrs(const std::vector<int>& axes, bool keep_dims) {
  if (axes.size() > AXON_MAX_RANK)
    throw UsageError("reduce: " + std::to_string(axes.size()) + " axes, more than a tensor's " +
                     std::to_string(AXON_MAX_RANK) + " dimensions");
  axon_reduce_attrs a{};
  a.struct_size = sizeof a;
  a.num_axes = static_cast<int32_t>(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) a.axes[i] = axes[i];
  a.keep_dims = keep_dims ? 1 : 0;
  return a;
}
void stateless_random_normal(Tensor& y, const axon_random_attrs& a, const std::string& layer) {
  call<OpId::StatelessRandomNormalV2>(layer, std::array<const Tensor*, 0>{}, out(&y), &a);
}
void stateless_random_uniform(Tensor& y, const axon_random_attrs& a, const std::string& layer) {
  call<OpId::StatelessRandomUniformV2>(layer, std::array<const Tensor*, 0>{}, out(&y), &a);
}
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

void sigmoid(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Sigmoid>(layer, in(&x), out(&y)); }
void sigmoid_grad(const Tensor& y, const Tensor& dy, Tensor& dx, const std::string& layer) {
  call<OpId::SigmoidGrad>(layer, in(&y, &dy), out(&dx));
}
void tanh(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Tanh>(layer, in(&x), out(&y)); }
void tanh_grad(const Tensor& y, const Tensor& dy, Tensor& dx, const std::string& layer) {
  call<OpId::TanhGrad>(layer, in(&y, &dy), out(&dx));
}
void elu(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Elu>(layer, in(&x), out(&y)); }
void elu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer) {
  call<OpId::EluGrad>(layer, in(&dy, &y), out(&dx));
}
void selu(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Selu>(layer, in(&x), out(&y)); }
void selu_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer) {
  call<OpId::SeluGrad>(layer, in(&dy, &y), out(&dx));
}
void relu6(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Relu6>(layer, in(&x), out(&y)); }
void relu6_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer) {
  call<OpId::Relu6Grad>(layer, in(&dy, &x), out(&dx));
}
namespace {
axon_leaky_relu_attrs leaky(float alpha) {
  axon_leaky_relu_attrs a{};
  a.struct_size = sizeof a;
  a.alpha = alpha;
  return a;
}
axon_gelu_attrs gelu_form(bool approximate) {
  axon_gelu_attrs a{};
  a.struct_size = sizeof a;
  a.approximate = approximate ? 1 : 0;
  return a;
}
axon_slice_attrs slice_attrs(const std::vector<int64_t>& begin) {
  axon_slice_attrs a{};
  a.struct_size = sizeof a;
  for (size_t i = 0; i < begin.size() && i < AXON_MAX_RANK; ++i) a.begin[i] = begin[i];
  return a;
}
}  // namespace
void leaky_relu(const Tensor& x, Tensor& y, float alpha, const std::string& layer) {
  const auto a = leaky(alpha);
  call<OpId::LeakyRelu>(layer, in(&x), out(&y), &a);
}
void leaky_relu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, float alpha, const std::string& layer) {
  const auto a = leaky(alpha);
  call<OpId::LeakyReluGrad>(layer, in(&dy, &x), out(&dx), &a);
}
void softplus(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Softplus>(layer, in(&x), out(&y)); }
void softplus_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer) {
  call<OpId::SoftplusGrad>(layer, in(&dy, &x), out(&dx));
}
void gelu(const Tensor& x, Tensor& y, bool approximate, const std::string& layer) {
  const auto a = gelu_form(approximate);
  call<OpId::Gelu>(layer, in(&x), out(&y), &a);
}
void gelu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, bool approximate, const std::string& layer) {
  const auto a = gelu_form(approximate);
  call<OpId::GeluGrad>(layer, in(&dy, &x), out(&dx), &a);
}
void silu(const Tensor& x, Tensor& y, const std::string& layer) { call<OpId::Silu>(layer, in(&x), out(&y)); }
void silu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const std::string& layer) {
  call<OpId::SiluGrad>(layer, in(&dy, &x), out(&dx));
}
axon_clipped_relu_attrs clipped_relu_attrs(float negative_slope, float max_value, float threshold) {
  axon_clipped_relu_attrs a{};
  a.struct_size = sizeof a;
  a.negative_slope = negative_slope;
  a.max_value = max_value;
  a.threshold = threshold;
  return a;
}
void clipped_relu(const Tensor& x, Tensor& y, const axon_clipped_relu_attrs& a, const std::string& layer) {
  call<OpId::ClippedRelu>(layer, in(&x), out(&y), &a);
}
void clipped_relu_grad(const Tensor& dy, const Tensor& x, Tensor& dx, const axon_clipped_relu_attrs& a,
                       const std::string& layer) {
  call<OpId::ClippedReluGrad>(layer, in(&dy, &x), out(&dx), &a);
}
void softmax(const Tensor& logits, Tensor& y, const std::string& layer) {
  call<OpId::Softmax>(layer, in(&logits), out(&y));
}
void softmax_grad(const Tensor& dy, const Tensor& y, Tensor& dx, const std::string& layer) {
  call<OpId::SoftmaxGrad>(layer, in(&dy, &y), out(&dx));
}

axon_pool_attrs pool_attrs(int window_h, int window_w, int stride_h, int stride_w, axon_padding padding) {
  axon_pool_attrs a{};
  a.struct_size = sizeof a;
  a.window_h = window_h;
  a.window_w = window_w;
  a.stride_h = stride_h;
  a.stride_w = stride_w;
  a.padding = padding;
  return a;
}
void avg_pool(const Tensor& x, Tensor& y, const axon_pool_attrs& a, const std::string& layer) {
  call<OpId::AvgPool>(layer, in(&x), out(&y), &a);
}
void avg_pool_grad(const Tensor& dy, Tensor& dx, const axon_pool_attrs& a, const std::string& layer) {
  call<OpId::AvgPoolGrad>(layer, in(&dy), out(&dx), &a);
}
void sub(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer) {
  call<OpId::Sub>(layer, in(&a, &b), out(&y));
}
void mul(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer) {
  call<OpId::Mul>(layer, in(&a, &b), out(&y));
}
void maximum(const Tensor& a, const Tensor& b, Tensor& y, const std::string& layer) {
  call<OpId::Maximum>(layer, in(&a, &b), out(&y));
}
void maximum_grad(const Tensor& dy, const Tensor& a, const Tensor& b, Tensor& da, Tensor& db,
                  const std::string& layer) {
  call<OpId::MaximumGrad>(layer, in(&dy, &a, &b), out(&da, &db));
}
void concat(const std::vector<const Tensor*>& xs, Tensor& y, int axis, const std::string& layer) {
  axon_concat_attrs a{};
  a.struct_size = sizeof a;
  a.axis = axis;
  Tensor* outputs[] = {&y};
  OpCall c;  // a run-time input count, as AddN's
  c.op = OpId::ConcatV2;
  c.layer = layer;
  c.inputs = xs;
  c.outputs = outputs;
  c.attrs = &a;
  run(c);
}
void slice(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, const std::string& layer) {
  const auto a = slice_attrs(begin);
  call<OpId::Slice>(layer, in(&x), out(&y), &a);
}
void pad(const Tensor& x, Tensor& y, const std::vector<int64_t>& begin, const std::string& layer) {
  const auto a = slice_attrs(begin);
  call<OpId::Pad>(layer, in(&x), out(&y), &a);
}

axon_batch_norm_attrs batch_norm_attrs(float epsilon, bool is_training, float exponential_avg_factor) {
  axon_batch_norm_attrs a{};
  a.struct_size = sizeof a;
  a.epsilon = epsilon;
  a.exponential_avg_factor = exponential_avg_factor;
  a.is_training = is_training ? 1 : 0;
  return a;
}
void fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                      const Tensor& variance, Tensor& y, const axon_batch_norm_attrs& a, const std::string& layer) {
  call<OpId::FusedBatchNormV3>(layer, in(&x, &scale, &offset, &mean, &variance), out(&y), &a);
}
void fused_batch_norm_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                               const Tensor& variance, Tensor& y, Tensor& batch_mean, Tensor& batch_variance,
                               Tensor& reserve_space_1, Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                               const std::string& layer) {
  call<OpId::FusedBatchNormV3>(layer, in(&x, &scale, &offset, &mean, &variance),
                               out(&y, &batch_mean, &batch_variance, &reserve_space_1, &reserve_space_2), &a);
}
void fused_batch_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& reserve_space_1,
                           const Tensor& reserve_space_2, Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop,
                           const axon_batch_norm_attrs& a, const std::string& layer) {
  call<OpId::FusedBatchNormGradV3>(layer, in(&dy, &x, &scale, &reserve_space_1, &reserve_space_2),
                                   out(&dx, &scale_backprop, &offset_backprop), &a);
}
namespace {
axon_layer_norm_attrs layer_norm_attrs(float epsilon) {
  axon_layer_norm_attrs a{};
  a.struct_size = sizeof a;
  a.epsilon = epsilon;
  return a;
}
}  // namespace
void layer_norm(const Tensor& x, const Tensor& scale, const Tensor& offset, Tensor& y, Tensor& mean, Tensor& inv_std,
                float epsilon, const std::string& layer) {
  const axon_layer_norm_attrs a = layer_norm_attrs(epsilon);
  call<OpId::LayerNorm>(layer, in(&x, &scale, &offset), out(&y, &mean, &inv_std), &a);
}
void layer_norm_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& mean, const Tensor& inv_std,
                     Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop, float epsilon,
                     const std::string& layer) {
  const axon_layer_norm_attrs a = layer_norm_attrs(epsilon);
  call<OpId::LayerNormGrad>(layer, in(&dy, &x, &scale, &mean, &inv_std), out(&dx, &scale_backprop, &offset_backprop),
                            &a);
}
axon_fused_batch_norm_attrs fused_batch_norm_relu_attrs(const axon_batch_norm_attrs& a) {
  axon_fused_batch_norm_attrs f{};
  f.struct_size = sizeof f;
  f.batch_norm = a;
  f.activation = AXON_ACTIVATION_RELU;
  return f;
}
void fused_batch_norm_relu(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                           const Tensor& variance, Tensor& y, const axon_batch_norm_attrs& a, const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormEx>(layer, in(&x, &scale, &offset, &mean, &variance), out(&y), &f);
}
void fused_batch_norm_relu_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                    const Tensor& variance, Tensor& y, Tensor& batch_mean, Tensor& batch_variance,
                                    Tensor& reserve_space_1, Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                                    const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormEx>(layer, in(&x, &scale, &offset, &mean, &variance),
                               out(&y, &batch_mean, &batch_variance, &reserve_space_1, &reserve_space_2), &f);
}
void fused_batch_norm_relu_grad(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& reserve_space_1,
                                const Tensor& reserve_space_2, const Tensor& y, Tensor& dx, Tensor& scale_backprop,
                                Tensor& offset_backprop, const axon_batch_norm_attrs& a, const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormGradEx>(layer, in(&dy, &x, &scale, &reserve_space_1, &reserve_space_2, &y),
                                   out(&dx, &scale_backprop, &offset_backprop), &f);
}
void fused_batch_norm_add_relu(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                               const Tensor& variance, const Tensor& side_input, Tensor& y,
                               const axon_batch_norm_attrs& a, const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormAddEx>(layer, in(&x, &scale, &offset, &mean, &variance, &side_input), out(&y), &f);
}
void fused_batch_norm_add_relu_training(const Tensor& x, const Tensor& scale, const Tensor& offset, const Tensor& mean,
                                        const Tensor& variance, const Tensor& side_input, Tensor& y,
                                        Tensor& batch_mean, Tensor& batch_variance, Tensor& reserve_space_1,
                                        Tensor& reserve_space_2, const axon_batch_norm_attrs& a,
                                        const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormAddEx>(layer, in(&x, &scale, &offset, &mean, &variance, &side_input),
                                  out(&y, &batch_mean, &batch_variance, &reserve_space_1, &reserve_space_2), &f);
}
void fused_batch_norm_add_relu_grad(const Tensor& dy, const Tensor& x, const Tensor& scale,
                                    const Tensor& reserve_space_1, const Tensor& reserve_space_2, const Tensor& y,
                                    Tensor& dx, Tensor& scale_backprop, Tensor& offset_backprop,
                                    Tensor& side_input_backprop, const axon_batch_norm_attrs& a,
                                    const std::string& layer) {
  const axon_fused_batch_norm_attrs f = fused_batch_norm_relu_attrs(a);
  call<OpId::FusedBatchNormAddGradEx>(layer, in(&dy, &x, &scale, &reserve_space_1, &reserve_space_2, &y),
                                      out(&dx, &scale_backprop, &offset_backprop, &side_input_backprop), &f);
}
void moving_average(Tensor& var, const Tensor& value, float momentum, float weight, const std::string& layer) {
  axon_moving_average_attrs a{};
  a.struct_size = sizeof a;
  a.momentum = momentum;
  a.weight = weight;
  call<OpId::MovingAverage>(layer, in(&var, &value), std::array<Tensor*, 0>{}, &a);
}

axon_conv2d_attrs conv2d_attrs(int stride_h, int stride_w, int dilation_h, int dilation_w, axon_padding padding) {
  axon_conv2d_attrs a{};
  a.struct_size = sizeof a;
  a.stride_h = stride_h;
  a.stride_w = stride_w;
  a.dilation_h = dilation_h;
  a.dilation_w = dilation_w;
  a.padding = padding;
  return a;
}
void depthwise_conv2d(const Tensor& x, const Tensor& filter, Tensor& y, const axon_conv2d_attrs& a,
                      const std::string& layer) {
  call<OpId::DepthwiseConv2dNative>(layer, in(&x, &filter), out(&y), &a);
}
void depthwise_conv2d_backprop_input(const Tensor& dy, const Tensor& filter, Tensor& dx, const axon_conv2d_attrs& a,
                                     const std::string& layer) {
  call<OpId::DepthwiseConv2dNativeBackpropInput>(layer, in(&dy, &filter), out(&dx), &a);
}
void depthwise_conv2d_backprop_filter(const Tensor& x, const Tensor& dy, Tensor& dfilter, const axon_conv2d_attrs& a,
                                      const std::string& layer) {
  call<OpId::DepthwiseConv2dNativeBackpropFilter>(layer, in(&x, &dy), out(&dfilter), &a);
}

}  // namespace axon::ops
