// The op table: the one place where each op of plugin_abi.h is described —
// its name, inputs and outputs with their dtypes, attribute struct, in-place
// inputs, the ABI minor that added it and, for fused ops, what it decomposes
// into. The host's op wrappers, dispatch, validation (op_validate.hpp),
// `axon-devices --ops`, `axon-plugin-check` and the op list in the docs are
// all driven by it (TensorFlow's REGISTER_OP and ggml's op enum with its name
// table are the models). Adding an op = one row here + its shape rule in
// op_validate.hpp + kernels.
#pragma once

#include <axon/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace axon {

// Ops in table order. OpId::count is the number of ops.
enum class OpId : uint8_t {
  Conv2D,
  Conv2DBackpropInput,
  Conv2DBackpropFilter,
  MaxPool,
  MaxPoolGrad,
  Relu,
  ReluGrad,
  MatMul,
  BiasAdd,
  BiasAddGrad,
  SparseSoftmaxCrossEntropyWithLogits,
  ApplyAdam,
  InTopK,
  Sum,
  Fill,
  Scale,
  AddN,
  NormalizeImage,
  Identity,
  FusedConv2D,
  FusedMatMul,
  FusedReluGradBiasAddGrad,
  FusedConv2DMaxPool,
  FusedConv2DMaxPoolGrad,
  SparseCategoricalAccuracy,
  Sigmoid,
  SigmoidGrad,
  Tanh,
  TanhGrad,
  Elu,
  EluGrad,
  Selu,
  SeluGrad,
  Relu6,
  Relu6Grad,
  LeakyRelu,
  LeakyReluGrad,
  Softplus,
  SoftplusGrad,
  Gelu,
  GeluGrad,
  Silu,
  SiluGrad,
  ClippedRelu,
  ClippedReluGrad,
  Softmax,
  SoftmaxGrad,
  AvgPool,
  AvgPoolGrad,
  Sub,
  Mul,
  Maximum,
  MaximumGrad,
  ConcatV2,
  Slice,
  Pad,
  FusedBatchNormV3,
  FusedBatchNormGradV3,
  MovingAverage,
  DepthwiseConv2dNative,
  DepthwiseConv2dNativeBackpropInput,
  DepthwiseConv2dNativeBackpropFilter,
  FusedBatchNormEx,
  FusedBatchNormGradEx,
  ApplySGD,
  ApplyRMSprop,
  ApplyAdamWithAmsgrad,
  ApplyAdagrad,
  ApplyNadam,
  ApplyWeightDecay,
  ClipGradients,
  CategoricalCrossentropy,
  BinaryCrossentropy,
  RegressionLoss,
  BinaryAccuracy,
  InTopKV2,
  StatelessRandomNormalV2,
  StatelessRandomUniformV2,
  ReduceSum,
  Mean,
  Max,
  FusedBatchNormAddEx,
  FusedBatchNormAddGradEx,
  Conv2DBackpropInputAccumulate,
  LayerNorm,
  LayerNormGrad,
  count
};
inline constexpr int kOpCount = static_cast<int>(OpId::count);

// The attribute struct an op takes through axon_kernel_call.attrs.
enum class AttrKind : uint8_t {
  none,
  conv2d,
  pool,
  matmul,
  adam,
  fill,
  scale,
  fused_conv2d,
  fused_matmul,
  fused_conv2d_max_pool,
  leaky_relu,
  clipped_relu,
  gelu,
  concat,
  slice,
  batch_norm,
  moving_average,
  fused_batch_norm,
  sgd,
  rmsprop,
  adagrad,
  nadam,
  weight_decay,
  clip,
  crossentropy,
  regression_loss,
  binary_accuracy,
  in_top_k,
  random,
  reduce,
  layer_norm
};

// The struct's C name and the bytes a caller must fill at least (up to its
// last field: AXON_STRUCT_SIZE). Sizes grow only by appending fields.
struct AttrInfo {
  const char* struct_name;
  size_t min_size;
};
constexpr AttrInfo attr_info(AttrKind k) {
  switch (k) {
    case AttrKind::none: return {"", 0};
    case AttrKind::conv2d: return {"axon_conv2d_attrs", AXON_STRUCT_SIZE(axon_conv2d_attrs, padding)};
    case AttrKind::pool: return {"axon_pool_attrs", AXON_STRUCT_SIZE(axon_pool_attrs, padding)};
    case AttrKind::matmul: return {"axon_matmul_attrs", AXON_STRUCT_SIZE(axon_matmul_attrs, transpose_b)};
    case AttrKind::adam: return {"axon_adam_attrs", AXON_STRUCT_SIZE(axon_adam_attrs, step)};
    case AttrKind::fill: return {"axon_fill_attrs", AXON_STRUCT_SIZE(axon_fill_attrs, value)};
    case AttrKind::scale: return {"axon_scale_attrs", AXON_STRUCT_SIZE(axon_scale_attrs, alpha)};
    case AttrKind::fused_conv2d: return {"axon_fused_conv2d_attrs", AXON_STRUCT_SIZE(axon_fused_conv2d_attrs, activation)};
    case AttrKind::fused_matmul: return {"axon_fused_matmul_attrs", AXON_STRUCT_SIZE(axon_fused_matmul_attrs, activation)};
    case AttrKind::fused_conv2d_max_pool:
      return {"axon_fused_conv2d_max_pool_attrs", AXON_STRUCT_SIZE(axon_fused_conv2d_max_pool_attrs, pool)};
    case AttrKind::leaky_relu: return {"axon_leaky_relu_attrs", AXON_STRUCT_SIZE(axon_leaky_relu_attrs, alpha)};
    case AttrKind::clipped_relu: return {"axon_clipped_relu_attrs", AXON_STRUCT_SIZE(axon_clipped_relu_attrs, threshold)};
    case AttrKind::gelu: return {"axon_gelu_attrs", AXON_STRUCT_SIZE(axon_gelu_attrs, approximate)};
    case AttrKind::concat: return {"axon_concat_attrs", AXON_STRUCT_SIZE(axon_concat_attrs, axis)};
    case AttrKind::slice: return {"axon_slice_attrs", AXON_STRUCT_SIZE(axon_slice_attrs, begin)};
    case AttrKind::batch_norm: return {"axon_batch_norm_attrs", AXON_STRUCT_SIZE(axon_batch_norm_attrs, is_training)};
    case AttrKind::moving_average:
      return {"axon_moving_average_attrs", AXON_STRUCT_SIZE(axon_moving_average_attrs, weight)};
    case AttrKind::fused_batch_norm:
      return {"axon_fused_batch_norm_attrs", AXON_STRUCT_SIZE(axon_fused_batch_norm_attrs, activation)};
    case AttrKind::sgd: return {"axon_sgd_attrs", AXON_STRUCT_SIZE(axon_sgd_attrs, nesterov)};
    case AttrKind::rmsprop: return {"axon_rmsprop_attrs", AXON_STRUCT_SIZE(axon_rmsprop_attrs, centered)};
    case AttrKind::adagrad: return {"axon_adagrad_attrs", AXON_STRUCT_SIZE(axon_adagrad_attrs, epsilon)};
    case AttrKind::nadam: return {"axon_nadam_attrs", AXON_STRUCT_SIZE(axon_nadam_attrs, u_product)};
    case AttrKind::weight_decay:
      return {"axon_weight_decay_attrs", AXON_STRUCT_SIZE(axon_weight_decay_attrs, weight_decay)};
    case AttrKind::clip: return {"axon_clip_attrs", AXON_STRUCT_SIZE(axon_clip_attrs, clip)};
    case AttrKind::crossentropy:
      return {"axon_crossentropy_attrs", AXON_STRUCT_SIZE(axon_crossentropy_attrs, label_smoothing)};
    case AttrKind::regression_loss:
      return {"axon_regression_loss_attrs", AXON_STRUCT_SIZE(axon_regression_loss_attrs, delta)};
    case AttrKind::binary_accuracy:
      return {"axon_binary_accuracy_attrs", AXON_STRUCT_SIZE(axon_binary_accuracy_attrs, threshold)};
    case AttrKind::in_top_k: return {"axon_in_top_k_attrs", AXON_STRUCT_SIZE(axon_in_top_k_attrs, k)};
    case AttrKind::random: return {"axon_random_attrs", AXON_STRUCT_SIZE(axon_random_attrs, offset)};
    case AttrKind::reduce: return {"axon_reduce_attrs", AXON_STRUCT_SIZE(axon_reduce_attrs, keep_dims)};
    case AttrKind::layer_norm: return {"axon_layer_norm_attrs", AXON_STRUCT_SIZE(axon_layer_norm_attrs, epsilon)};
  }
  return {"", 0};
}

// The AttrKind of an attribute struct type (std::nullptr_t: none), so typed
// callers can check at compile time that they pass what the table says.
template <class A> struct attr_kind_of;
template <> struct attr_kind_of<std::nullptr_t> { static constexpr AttrKind value = AttrKind::none; };
template <> struct attr_kind_of<axon_conv2d_attrs> { static constexpr AttrKind value = AttrKind::conv2d; };
template <> struct attr_kind_of<axon_pool_attrs> { static constexpr AttrKind value = AttrKind::pool; };
template <> struct attr_kind_of<axon_matmul_attrs> { static constexpr AttrKind value = AttrKind::matmul; };
template <> struct attr_kind_of<axon_adam_attrs> { static constexpr AttrKind value = AttrKind::adam; };
template <> struct attr_kind_of<axon_fill_attrs> { static constexpr AttrKind value = AttrKind::fill; };
template <> struct attr_kind_of<axon_scale_attrs> { static constexpr AttrKind value = AttrKind::scale; };
template <> struct attr_kind_of<axon_fused_conv2d_attrs> { static constexpr AttrKind value = AttrKind::fused_conv2d; };
template <> struct attr_kind_of<axon_fused_matmul_attrs> { static constexpr AttrKind value = AttrKind::fused_matmul; };
template <> struct attr_kind_of<axon_fused_conv2d_max_pool_attrs> {
  static constexpr AttrKind value = AttrKind::fused_conv2d_max_pool;
};
template <> struct attr_kind_of<axon_leaky_relu_attrs> { static constexpr AttrKind value = AttrKind::leaky_relu; };
template <> struct attr_kind_of<axon_clipped_relu_attrs> { static constexpr AttrKind value = AttrKind::clipped_relu; };
template <> struct attr_kind_of<axon_gelu_attrs> { static constexpr AttrKind value = AttrKind::gelu; };
template <> struct attr_kind_of<axon_concat_attrs> { static constexpr AttrKind value = AttrKind::concat; };
template <> struct attr_kind_of<axon_slice_attrs> { static constexpr AttrKind value = AttrKind::slice; };
template <> struct attr_kind_of<axon_batch_norm_attrs> { static constexpr AttrKind value = AttrKind::batch_norm; };
template <> struct attr_kind_of<axon_moving_average_attrs> { static constexpr AttrKind value = AttrKind::moving_average; };
template <> struct attr_kind_of<axon_fused_batch_norm_attrs> {
  static constexpr AttrKind value = AttrKind::fused_batch_norm;
};
template <> struct attr_kind_of<axon_sgd_attrs> { static constexpr AttrKind value = AttrKind::sgd; };
template <> struct attr_kind_of<axon_rmsprop_attrs> { static constexpr AttrKind value = AttrKind::rmsprop; };
template <> struct attr_kind_of<axon_adagrad_attrs> { static constexpr AttrKind value = AttrKind::adagrad; };
template <> struct attr_kind_of<axon_nadam_attrs> { static constexpr AttrKind value = AttrKind::nadam; };
template <> struct attr_kind_of<axon_weight_decay_attrs> { static constexpr AttrKind value = AttrKind::weight_decay; };
template <> struct attr_kind_of<axon_clip_attrs> { static constexpr AttrKind value = AttrKind::clip; };
template <> struct attr_kind_of<axon_crossentropy_attrs> { static constexpr AttrKind value = AttrKind::crossentropy; };
template <> struct attr_kind_of<axon_regression_loss_attrs> {
  static constexpr AttrKind value = AttrKind::regression_loss;
};
template <> struct attr_kind_of<axon_binary_accuracy_attrs> {
  static constexpr AttrKind value = AttrKind::binary_accuracy;
};
template <> struct attr_kind_of<axon_in_top_k_attrs> { static constexpr AttrKind value = AttrKind::in_top_k; };
template <> struct attr_kind_of<axon_random_attrs> { static constexpr AttrKind value = AttrKind::random; };
template <> struct attr_kind_of<axon_reduce_attrs> { static constexpr AttrKind value = AttrKind::reduce; };
template <> struct attr_kind_of<axon_layer_norm_attrs> { static constexpr AttrKind value = AttrKind::layer_norm; };

// A tensor slot's dtype: a fixed one, or kDtypeT = the op's kernel dtype (the
// dtype of its first input, or first output when it has none).
inline constexpr int kDtypeT = -1;

struct TensorSlot {
  const char* name = nullptr;  // "x", "filter"; nullptr ends the list
  int dtype = AXON_FLOAT32;    // an axon_dtype or kDtypeT
};

inline constexpr int kMaxSlots = 6;

// What a fused op stands for: the plain ops, in the order they apply.
inline constexpr int kMaxParts = 6;
struct OpParts {
  int count = 0;
  OpId ops[kMaxParts] = {};
};

// The ABI that added an op: 1.x (a plain minor in the rows) or 2.x.
struct AbiVersion {
  int major = 1, minor = 0;
  constexpr AbiVersion(int minor_1x) : minor(minor_1x) {}  // NOLINT: the rows' plain 1.x minors
  constexpr AbiVersion(int major_, int minor_) : major(major_), minor(minor_) {}
};

struct OpSchema {
  OpId id;
  const char* name;  // TensorFlow's name where TensorFlow has the op
  TensorSlot inputs[kMaxSlots];
  int min_inputs, max_inputs;    // max_inputs -1: any number (AddN); slots past the list repeat the last
  TensorSlot outputs[kMaxSlots];
  int min_outputs, max_outputs;  // a trailing output may be optional
  AttrKind attrs;
  int in_place_inputs;  // the first N inputs are updated in place (outputs empty)
  AbiVersion added;     // the ABI that added the op (every 1.x op is in ABI 2.0)
  // Fused ops: the ops the host runs instead where a device lacks this one;
  // empty for the others. The results equal the composition within rounding.
  OpParts decomposes_into;
  // The dtypes a kernel may be keyed by (first input's, or first output's).
  uint8_t kernel_dtypes;  // bit (1 << axon_dtype)
  const char* summary;    // one line for listings and docs
};

constexpr uint8_t dtype_bit(axon_dtype t) { return static_cast<uint8_t>(1u << static_cast<unsigned>(t)); }
inline constexpr uint8_t kF32 = dtype_bit(AXON_FLOAT32);
inline constexpr uint8_t kAllDtypes =
    dtype_bit(AXON_FLOAT32) | dtype_bit(AXON_INT32) | dtype_bit(AXON_UINT8) | dtype_bit(AXON_INT64);
inline constexpr int kDtypeCount = 4;

// clang-format off
inline constexpr OpSchema kOpTable[] = {
  {OpId::Conv2D, "Conv2D", {{"x"}, {"filter"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::conv2d, 0, 0, {}, kF32,
   "2-D convolution: x NHWC, filter HWIO -> y NHWC"},
  {OpId::Conv2DBackpropInput, "Conv2DBackpropInput", {{"dy"}, {"filter"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::conv2d, 0, 0, {}, kF32,
   "gradient of Conv2D with respect to x (dx's shape says x's)"},
  {OpId::Conv2DBackpropFilter, "Conv2DBackpropFilter", {{"x"}, {"dy"}}, 2, 2, {{"dfilter"}}, 1, 1, AttrKind::conv2d, 0, 0, {}, kF32,
   "gradient of Conv2D with respect to the filter"},
  {OpId::MaxPool, "MaxPool", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::pool, 0, 0, {}, kF32,
   "max pooling over windows of x NHWC"},
  {OpId::MaxPoolGrad, "MaxPoolGrad", {{"x"}, {"y"}, {"dy"}}, 3, 3, {{"dx"}}, 1, 1, AttrKind::pool, 0, 0, {}, kF32,
   "gradient of MaxPool: dy routed to each window's first maximum"},
  {OpId::Relu, "Relu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "y = max(x, 0)"},
  {OpId::ReluGrad, "ReluGrad", {{"dy"}, {"y"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "dx = dy where y > 0, else 0"},
  {OpId::MatMul, "MatMul", {{"a"}, {"b"}}, 2, 2, {{"c"}}, 1, 1, AttrKind::matmul, 0, 0, {}, kF32,
   "c = op(a) op(b), 2-D, op = transpose or not"},
  {OpId::BiasAdd, "BiasAdd", {{"x"}, {"bias"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "y = x + bias over the last dimension (in place allowed)"},
  {OpId::BiasAddGrad, "BiasAddGrad", {{"dy"}}, 1, 1, {{"dbias"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "dbias = dy summed over all but the last dimension"},
  {OpId::SparseSoftmaxCrossEntropyWithLogits, "SparseSoftmaxCrossEntropyWithLogits",
   {{"logits"}, {"labels", AXON_INT32}}, 2, 2, {{"loss"}, {"dlogits"}}, 2, 2, AttrKind::none, 0, 0, {}, kF32,
   "loss [N] and dlogits = softmax - onehot (not divided by N)"},
  {OpId::ApplyAdam, "ApplyAdam", {{"var"}, {"m"}, {"v"}, {"grad"}}, 4, 4, {}, 0, 0, AttrKind::adam, 3, 0, {}, kF32,
   "Keras' Adam step, epsilon added to sqrt(v) after the bias correction folded into the learning rate"},
  {OpId::InTopK, "InTopK", {{"logits"}, {"labels", AXON_INT32}}, 2, 2, {{"correct"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "TensorFlow's InTopK with k = 1 (ties count), as float 0/1"},
  {OpId::Sum, "Sum", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "y (one element) = sum of all elements of x"},
  {OpId::Fill, "Fill", {}, 0, 0, {{"y"}}, 1, 1, AttrKind::fill, 0, 0, {}, kF32,
   "every element of y = value"},
  {OpId::Scale, "Scale", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::scale, 0, 0, {}, kF32,
   "y = alpha * x (in place allowed)"},
  {OpId::AddN, "AddN", {{"x"}}, 1, -1, {{"y"}}, 1, 1, AttrKind::none, 0, 0, {}, kF32,
   "y = x0 + x1 + ... elementwise"},
  {OpId::NormalizeImage, "NormalizeImage", {{"x", AXON_UINT8}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 0, {},
   dtype_bit(AXON_UINT8), "y (float32) = x (uint8) / 255"},
  {OpId::Identity, "Identity", {{"x", kDtypeT}}, 1, 1, {{"y", kDtypeT}}, 1, 1, AttrKind::none, 0, 0, {}, kAllDtypes,
   "y = x (a copy)"},
  {OpId::FusedConv2D, "_FusedConv2D", {{"x"}, {"filter"}, {"bias"}}, 3, 3, {{"y"}}, 1, 1, AttrKind::fused_conv2d, 0, 1,
   {3, {OpId::Conv2D, OpId::BiasAdd, OpId::Relu}}, kF32, "activation(Conv2D(x, filter) + bias)"},
  {OpId::FusedMatMul, "_FusedMatMul", {{"a"}, {"b"}, {"bias"}}, 3, 3, {{"c"}}, 1, 1, AttrKind::fused_matmul, 0, 1,
   {3, {OpId::MatMul, OpId::BiasAdd, OpId::Relu}}, kF32, "activation(MatMul(a, b) + bias)"},
  {OpId::FusedReluGradBiasAddGrad, "_FusedReluGradBiasAddGrad", {{"dy"}, {"y"}}, 2, 2, {{"dx"}, {"dbias"}}, 2, 2,
   AttrKind::none, 0, 1, {2, {OpId::ReluGrad, OpId::BiasAddGrad}}, kF32, "dx = ReluGrad(dy, y), dbias = BiasAddGrad(dx)"},
  {OpId::FusedConv2DMaxPool, "_FusedConv2DMaxPool", {{"x"}, {"filter"}, {"bias"}}, 3, 3,
   {{"y"}, {"argmax", AXON_UINT8}}, 2, 2, AttrKind::fused_conv2d_max_pool, 0, 2, {4, {OpId::Conv2D, OpId::BiasAdd, OpId::Relu, OpId::MaxPool}}, kF32,
   "MaxPool(activation(Conv2D(x, filter) + bias)) and each window's argmax tap"},
  {OpId::FusedConv2DMaxPoolGrad, "_FusedConv2DMaxPoolGrad", {{"x"}, {"filter"}, {"dy"}, {"argmax", AXON_UINT8}}, 4, 4,
   {{"dfilter"}, {"dbias"}, {"dx"}}, 2, 3, AttrKind::fused_conv2d_max_pool, 0, 2,
   {5, {OpId::MaxPoolGrad, OpId::ReluGrad, OpId::BiasAddGrad, OpId::Conv2DBackpropFilter,
    OpId::Conv2DBackpropInput}}, kF32,
   "the gradients of _FusedConv2DMaxPool (dx only when a third output is passed)"},
  {OpId::SparseCategoricalAccuracy, "_SparseCategoricalAccuracy", {{"logits"}, {"labels", AXON_INT32}}, 2, 2,
   {{"correct"}}, 1, 1, AttrKind::none, 0, 3, {1, {OpId::InTopK}}, kF32,
   "Keras' sparse_categorical_accuracy (a tie goes to the lower index)"},

  // ABI 1.4: the layers of Keras' image classifiers. Activation gradients take
  // their inputs in TensorFlow's order.
  {OpId::Sigmoid, "Sigmoid", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = 1 / (1 + exp(-x))"},
  {OpId::SigmoidGrad, "SigmoidGrad", {{"y"}, {"dy"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy * y * (1 - y)"},
  {OpId::Tanh, "Tanh", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = tanh(x)"},
  {OpId::TanhGrad, "TanhGrad", {{"y"}, {"dy"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy * (1 - y * y)"},
  {OpId::Elu, "Elu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = x where x > 0, else exp(x) - 1"},
  {OpId::EluGrad, "EluGrad", {{"dy"}, {"y"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy where y > 0, else dy * (y + 1)"},
  {OpId::Selu, "Selu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = scale * x where x > 0, else scale * alpha * (exp(x) - 1) (TensorFlow's constants)"},
  {OpId::SeluGrad, "SeluGrad", {{"dy"}, {"y"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy * scale where y > 0, else dy * (y + scale * alpha)"},
  {OpId::Relu6, "Relu6", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = min(max(x, 0), 6)"},
  {OpId::Relu6Grad, "Relu6Grad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy where 0 < x < 6, else 0"},
  {OpId::LeakyRelu, "LeakyRelu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::leaky_relu, 0, 4, {}, kF32,
   "y = x where x > 0, else alpha * x"},
  {OpId::LeakyReluGrad, "LeakyReluGrad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::leaky_relu, 0, 4, {}, kF32,
   "dx = dy where x > 0, else alpha * dy"},
  {OpId::Softplus, "Softplus", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = log(1 + exp(x))"},
  {OpId::SoftplusGrad, "SoftplusGrad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy * sigmoid(x)"},
  {OpId::Gelu, "Gelu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::gelu, 0, 4, {}, kF32,
   "y = x * Phi(x) (erf form), or its tanh approximation"},
  {OpId::GeluGrad, "GeluGrad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::gelu, 0, 4, {}, kF32,
   "dx = dy * d/dx Gelu(x)"},
  {OpId::Silu, "Silu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = x * sigmoid(x) (Keras' silu and swish)"},
  {OpId::SiluGrad, "SiluGrad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = dy * sigmoid(x) * (1 + x * (1 - sigmoid(x)))"},
  {OpId::ClippedRelu, "ClippedRelu", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::clipped_relu, 0, 4, {}, kF32,
   "Keras' relu(x, negative_slope, max_value, threshold)"},
  {OpId::ClippedReluGrad, "ClippedReluGrad", {{"dy"}, {"x"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::clipped_relu, 0, 4, {},
   kF32, "dx = dy where threshold < x < max_value, negative_slope * dy where x <= threshold, else 0"},
  {OpId::Softmax, "Softmax", {{"logits"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = softmax over the last dimension"},
  {OpId::SoftmaxGrad, "SoftmaxGrad", {{"dy"}, {"y"}}, 2, 2, {{"dx"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "dx = (dy - sum(dy * y) over the last dimension) * y"},
  {OpId::AvgPool, "AvgPool", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::pool, 0, 4, {}, kF32,
   "average pooling over windows of x NHWC (SAME: over the taps inside x)"},
  {OpId::AvgPoolGrad, "AvgPoolGrad", {{"dy"}}, 1, 1, {{"dx"}}, 1, 1, AttrKind::pool, 0, 4, {}, kF32,
   "gradient of AvgPool (dx's shape says x's)"},
  {OpId::Sub, "Sub", {{"a"}, {"b"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = a - b elementwise (equal shapes)"},
  {OpId::Mul, "Mul", {{"a"}, {"b"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = a * b elementwise (equal shapes)"},
  {OpId::Maximum, "Maximum", {{"a"}, {"b"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::none, 0, 4, {}, kF32,
   "y = max(a, b) elementwise (equal shapes)"},
  {OpId::MaximumGrad, "MaximumGrad", {{"dy"}, {"a"}, {"b"}}, 3, 3, {{"da"}, {"db"}}, 2, 2, AttrKind::none, 0, 4, {},
   kF32, "da = dy where a >= b, db = dy where a < b (TensorFlow's rule for ties)"},
  {OpId::ConcatV2, "ConcatV2", {{"x"}}, 1, -1, {{"y"}}, 1, 1, AttrKind::concat, 0, 4, {}, kF32,
   "y = the inputs joined along axis"},
  {OpId::Slice, "Slice", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::slice, 0, 4, {}, kF32,
   "y = x[begin : begin + shape(y)]"},
  {OpId::Pad, "Pad", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::slice, 0, 4, {}, kF32,
   "y = zeros with x at begin"},
  {OpId::FusedBatchNormV3, "FusedBatchNormV3", {{"x"}, {"scale"}, {"offset"}, {"mean"}, {"variance"}}, 5, 5,
   {{"y"}, {"batch_mean"}, {"batch_variance"}, {"reserve_space_1"}, {"reserve_space_2"}}, 1, 5, AttrKind::batch_norm,
   0, 4, {}, kF32,
   "batch normalization over the last dimension; training: the batch's statistics (5 outputs)"},
  {OpId::FusedBatchNormGradV3, "FusedBatchNormGradV3", {{"dy"}, {"x"}, {"scale"}, {"reserve_space_1"},
   {"reserve_space_2"}}, 5, 5, {{"dx"}, {"scale_backprop"}, {"offset_backprop"}}, 3, 3, AttrKind::batch_norm, 0, 4, {},
   kF32, "gradients of FusedBatchNormV3 (reserve spaces: the mean and biased variance it used)"},
  {OpId::MovingAverage, "MovingAverage", {{"var"}, {"value"}}, 2, 2, {}, 0, 0, AttrKind::moving_average, 1, 4, {}, kF32,
   "var = momentum * var + weight * value (batch normalization's moving statistics)"},
  {OpId::DepthwiseConv2dNative, "DepthwiseConv2dNative", {{"x"}, {"filter"}}, 2, 2, {{"y"}}, 1, 1, AttrKind::conv2d, 0,
   4, {}, kF32, "depthwise 2-D convolution: filter [KH, KW, C, M] -> y channels C * M"},
  {OpId::DepthwiseConv2dNativeBackpropInput, "DepthwiseConv2dNativeBackpropInput", {{"dy"}, {"filter"}}, 2, 2,
   {{"dx"}}, 1, 1, AttrKind::conv2d, 0, 4, {}, kF32, "gradient of DepthwiseConv2dNative with respect to x"},
  {OpId::DepthwiseConv2dNativeBackpropFilter, "DepthwiseConv2dNativeBackpropFilter", {{"x"}, {"dy"}}, 2, 2,
   {{"dfilter"}}, 1, 1, AttrKind::conv2d, 0, 4, {}, kF32, "gradient of DepthwiseConv2dNative with respect to the filter"},

  // ABI 1.5: batch normalization with its activation (the fusion pass pairs a
  // BatchNormalization with the ReLU after it).
  {OpId::FusedBatchNormEx, "_FusedBatchNormEx", {{"x"}, {"scale"}, {"offset"}, {"mean"}, {"variance"}}, 5, 5,
   {{"y"}, {"batch_mean"}, {"batch_variance"}, {"reserve_space_1"}, {"reserve_space_2"}}, 1, 5,
   AttrKind::fused_batch_norm, 0, 5, {2, {OpId::FusedBatchNormV3, OpId::Relu}}, kF32,
   "activation(FusedBatchNormV3(x, ...)) and FusedBatchNormV3's statistics"},
  {OpId::FusedBatchNormGradEx, "_FusedBatchNormGradEx", {{"dy"}, {"x"}, {"scale"}, {"reserve_space_1"},
   {"reserve_space_2"}, {"y"}}, 6, 6, {{"dx"}, {"scale_backprop"}, {"offset_backprop"}}, 3, 3,
   AttrKind::fused_batch_norm, 0, 5, {2, {OpId::ReluGrad, OpId::FusedBatchNormGradV3}}, kF32,
   "FusedBatchNormGradV3(ReluGrad(dy, y), x, ...) (y: _FusedBatchNormEx's output)"},

  // ABI 1.6: Keras' optimizers, each one pass over a flat parameter buffer
  // (plugin_abi.h gives each update rule).
  {OpId::ApplySGD, "ApplySGD", {{"var"}, {"velocity"}, {"grad"}}, 3, 3, {}, 0, 0, AttrKind::sgd, 2, 6, {}, kF32,
   "Keras' SGD step with momentum and nesterov"},
  {OpId::ApplyRMSprop, "ApplyRMSprop", {{"var"}, {"velocity"}, {"momentum"}, {"average_grad"}, {"grad"}}, 5, 5, {}, 0,
   0, AttrKind::rmsprop, 4, 6, {}, kF32, "Keras' RMSprop step (epsilon inside the square root; momentum, centered)"},
  {OpId::ApplyAdamWithAmsgrad, "ApplyAdamWithAmsgrad", {{"var"}, {"m"}, {"v"}, {"vhat"}, {"grad"}}, 5, 5, {}, 0, 0,
   AttrKind::adam, 4, 6, {}, kF32, "Keras' Adam step with amsgrad: vhat = max(vhat, v) in the denominator"},
  {OpId::ApplyAdagrad, "ApplyAdagrad", {{"var"}, {"accumulator"}, {"grad"}}, 3, 3, {}, 0, 0, AttrKind::adagrad, 2, 6,
   {}, kF32, "Keras' Adagrad step (epsilon inside the square root)"},
  {OpId::ApplyNadam, "ApplyNadam", {{"var"}, {"m"}, {"v"}, {"grad"}}, 4, 4, {}, 0, 0, AttrKind::nadam, 3, 6, {}, kF32,
   "Keras' Nadam step (momentum cache u_product from the caller)"},
  {OpId::ApplyWeightDecay, "ApplyWeightDecay", {{"var"}}, 1, 1, {}, 0, 0, AttrKind::weight_decay, 1, 6, {}, kF32,
   "var -= var * weight_decay * learning_rate (Keras' weight_decay)"},
  {OpId::ClipGradients, "ClipGradients", {{"grad"}, {"segment_ends", AXON_INT64}}, 2, 2, {}, 0, 0, AttrKind::clip, 1,
   6, {}, kF32, "Keras' clipvalue, clipnorm (per variable) or global_clipnorm over variables laid end to end"},

  // ABI 1.7: Keras' losses on predictions and int32 class labels (plugin_abi.h
  // gives each formula): the per-sample loss and its gradient.
  {OpId::CategoricalCrossentropy, "CategoricalCrossentropy", {{"predictions"}, {"labels", AXON_INT32}}, 2, 2,
   {{"loss"}, {"dpredictions"}}, 2, 2, AttrKind::crossentropy, 0, 7, {}, kF32,
   "Keras' categorical cross-entropy of one-hot labels (label smoothing; logits or probabilities)"},
  {OpId::BinaryCrossentropy, "BinaryCrossentropy", {{"predictions"}, {"labels", AXON_INT32}}, 2, 2,
   {{"loss"}, {"dpredictions"}}, 2, 2, AttrKind::crossentropy, 0, 7, {}, kF32,
   "Keras' binary cross-entropy of 0/1 labels on one unit (label smoothing; logits or probabilities)"},
  {OpId::RegressionLoss, "RegressionLoss", {{"predictions"}, {"labels", AXON_INT32}}, 2, 2,
   {{"loss"}, {"dpredictions"}}, 2, 2, AttrKind::regression_loss, 0, 7, {}, kF32,
   "Keras' mean squared error, mean absolute error or Huber against one-hot labels (the label on one unit)"},
  {OpId::BinaryAccuracy, "BinaryAccuracy", {{"predictions"}, {"labels", AXON_INT32}}, 2, 2, {{"correct"}}, 1, 1,
   AttrKind::binary_accuracy, 0, 7, {}, kF32,
   "Keras' binary_accuracy: (prediction > threshold) == label, as float 0/1"},

  // ABI 1.8: Keras' top-k accuracies.
  {OpId::InTopKV2, "InTopKV2", {{"predictions"}, {"targets", AXON_INT32}}, 2, 2, {{"correct"}}, 1, 1,
   AttrKind::in_top_k, 0, 8, {}, kF32,
   "TensorFlow's InTopKV2: fewer than k predictions above the target's (ties count), as float 0/1"},
  // ABI 1.9: TensorFlow's stateless random ops (Philox-4x32-10, each element
  // by its index) and reductions over a set of axes (plugin_abi.h).
  {OpId::StatelessRandomNormalV2, "StatelessRandomNormalV2", {}, 0, 0, {{"y"}}, 1, 1, AttrKind::random, 0, 9, {},
   kF32, "y = TensorFlow's stateless standard normals of key and counter * scale + offset"},
  {OpId::StatelessRandomUniformV2, "StatelessRandomUniformV2", {}, 0, 0, {{"y"}}, 1, 1, AttrKind::random, 0, 9, {},
   kF32, "y = TensorFlow's stateless uniforms in [0, 1) of key and counter * scale + offset"},
  {OpId::ReduceSum, "ReduceSum", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::reduce, 0, 9, {}, kF32,
   "TensorFlow's Sum over axes (keep_dims); over no element 0"},
  {OpId::Mean, "Mean", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::reduce, 0, 9, {}, kF32,
   "TensorFlow's Mean over axes (keep_dims); over no element NaN"},
  {OpId::Max, "Max", {{"x"}}, 1, 1, {{"y"}}, 1, 1, AttrKind::reduce, 0, 9, {}, kF32,
   "TensorFlow's Max over axes (keep_dims; NaN propagates); over no element -inf"},

  // ABI 2.1: batch normalization, a residual branch added and the activation
  // in one pass (TensorFlow's _FusedBatchNormEx with a side input; rows of
  // their own, so that a 2.0 plugin's _FusedBatchNormEx never gets one).
  {OpId::FusedBatchNormAddEx, "_FusedBatchNormAddEx", {{"x"}, {"scale"}, {"offset"}, {"mean"}, {"variance"},
   {"side_input"}}, 6, 6, {{"y"}, {"batch_mean"}, {"batch_variance"}, {"reserve_space_1"}, {"reserve_space_2"}}, 1, 5,
   AttrKind::fused_batch_norm, 0, {2, 1}, {3, {OpId::FusedBatchNormV3, OpId::AddN, OpId::Relu}}, kF32,
   "activation(FusedBatchNormV3(x, ...) + side_input) and FusedBatchNormV3's statistics"},
  {OpId::FusedBatchNormAddGradEx, "_FusedBatchNormAddGradEx", {{"dy"}, {"x"}, {"scale"}, {"reserve_space_1"},
   {"reserve_space_2"}, {"y"}}, 6, 6, {{"dx"}, {"scale_backprop"}, {"offset_backprop"}, {"side_input_backprop"}}, 4, 4,
   AttrKind::fused_batch_norm, 0, {2, 1}, {2, {OpId::ReluGrad, OpId::FusedBatchNormGradV3}}, kF32,
   "side_input_backprop = ReluGrad(dy, y), then FusedBatchNormGradV3 of it (y: _FusedBatchNormAddEx's output)"},

  // ABI 2.2: a convolution's input gradient added into the gradient its input
  // already has from another reader (a ResNet block's input feeds two
  // branches), with no separate AddN pass over the tensor.
  {OpId::Conv2DBackpropInputAccumulate, "_Conv2DBackpropInputAccumulate", {{"dx"}, {"dy"}, {"filter"}}, 3, 3, {}, 0, 0,
   AttrKind::conv2d, 1, {2, 2}, {2, {OpId::Conv2DBackpropInput, OpId::AddN}}, kF32,
   "dx += Conv2DBackpropInput(dy, filter), dx's shape giving x's"},

  // ABI 2.3: Keras' LayerNormalization (TensorFlow has no op of its own; Keras
  // composes moments and arithmetic), each row normalised over its K values.
  {OpId::LayerNorm, "LayerNorm", {{"x"}, {"scale"}, {"offset"}}, 3, 3, {{"y"}, {"mean"}, {"inv_std"}}, 3, 3,
   AttrKind::layer_norm, 0, {2, 3}, {}, kF32,
   "layer normalization of x [R, K] over each row; mean and 1 / sqrt(variance + epsilon) per row"},
  {OpId::LayerNormGrad, "LayerNormGrad", {{"dy"}, {"x"}, {"scale"}, {"mean"}, {"inv_std"}}, 5, 5,
   {{"dx"}, {"scale_backprop"}, {"offset_backprop"}}, 3, 3, AttrKind::layer_norm, 0, {2, 3}, {}, kF32,
   "gradients of LayerNorm (mean and inv_std: its outputs)"},
};
// clang-format on

static_assert(sizeof kOpTable / sizeof kOpTable[0] == static_cast<size_t>(OpId::count), "one row per OpId");

constexpr bool table_in_id_order() {
  for (int i = 0; i < kOpCount; ++i)
    if (static_cast<int>(kOpTable[i].id) != i) return false;
  return true;
}
static_assert(table_in_id_order(), "rows in OpId order");

constexpr const OpSchema& op_schema(OpId id) { return kOpTable[static_cast<int>(id)]; }
constexpr const char* op_name(OpId id) { return op_schema(id).name; }

// The op of that name, or nullptr: the only place op names are compared.
inline const OpSchema* find_op(std::string_view name) {
  for (const OpSchema& s : kOpTable)
    if (name == s.name) return &s;
  return nullptr;
}

// Optional ops: the host uses them only where a device has a kernel.
constexpr bool op_is_optional(const OpSchema& s) { return s.decomposes_into.count > 0; }

// "Conv2D, BiasAdd, Relu": a fused op's parts by name, for listings.
inline std::string parts_string(const OpSchema& s) {
  std::string out;
  for (int i = 0; i < s.decomposes_into.count; ++i) {
    if (i > 0) out += ", ";
    out += kOpTable[static_cast<int>(s.decomposes_into.ops[i])].name;
  }
  return out;
}

constexpr bool kernel_dtype_allowed(const OpSchema& s, axon_dtype t) {
  return static_cast<unsigned>(t) < kDtypeCount && (s.kernel_dtypes & dtype_bit(t)) != 0;
}

// The slot an input or output index falls in (AddN's inputs repeat the last).
constexpr const TensorSlot& input_slot(const OpSchema& s, int i) {
  int last = 0;
  while (last + 1 < kMaxSlots && s.inputs[last + 1].name != nullptr) ++last;
  return s.inputs[i < last ? i : last];
}
constexpr const TensorSlot& output_slot(const OpSchema& s, int i) { return s.outputs[i < kMaxSlots ? i : kMaxSlots - 1]; }

// A slot's concrete dtype for a kernel keyed by `kernel_dtype`.
constexpr axon_dtype slot_dtype(const TensorSlot& slot, axon_dtype kernel_dtype) {
  return slot.dtype == kDtypeT ? kernel_dtype : static_cast<axon_dtype>(slot.dtype);
}

// "float32", "int32", "uint8", "int64"; "dtype(N)" style values are the
// caller's to print for anything else.
constexpr const char* dtype_name(axon_dtype t) {
  switch (t) {
    case AXON_FLOAT32: return "float32";
    case AXON_INT32: return "int32";
    case AXON_UINT8: return "uint8";
    case AXON_INT64: return "int64";
  }
  return "unknown dtype";
}

constexpr size_t dtype_size(axon_dtype t) {
  switch (t) {
    case AXON_FLOAT32: return 4;
    case AXON_INT32: return 4;
    case AXON_UINT8: return 1;
    case AXON_INT64: return 8;
  }
  return 0;
}

}  // namespace axon
