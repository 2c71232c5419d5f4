// The op table is consistent, and the validator accepts one well-formed call
// of every op and rejects each kind of malformed call with a message naming
// the op and the tensor. The well-formed shapes are worked by hand from
// TensorFlow's rules (VALID/SAME sizes), independently of op_geometry.hpp.
#include "op_call_parts.hpp"

#include <axon/op_table.hpp>
#include <axon/op_validate.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace axon;
using namespace axon::test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// One call of an op with its tensors and attributes kept alive.
struct Case {
  OpId op;
  std::vector<axon_tensor> in, out;
  const void* attrs = nullptr;

  axon_kernel_call call() const {
    axon_kernel_call c{};
    c.struct_size = sizeof c;
    c.op = op_name(op);
    c.num_inputs = static_cast<int32_t>(in.size());
    c.inputs = in.data();
    c.num_outputs = static_cast<int32_t>(out.size());
    c.outputs = const_cast<axon_tensor*>(out.data());
    c.attrs = attrs;
    return c;
  }
  std::string why() const {
    std::string w;
    const axon_kernel_call c = call();
    return validate_call(op_schema(op), c, &w) ? "" : w;
  }
};

const axon_conv2d_attrs kSame2 = conv(2, AXON_PADDING_SAME);  // 7x5 -> 4x3
const axon_conv2d_attrs kValid1 = conv(1, AXON_PADDING_VALID);
const axon_pool_attrs kPool2 = pool(2, 2, AXON_PADDING_VALID);
const axon_matmul_attrs kMatMulTb{sizeof(axon_matmul_attrs), 0, 1};
const axon_adam_attrs kAdam{sizeof(axon_adam_attrs), 0.001f, 0.9f, 0.999f, 1e-7f, 1};
const axon_fill_attrs kFill{sizeof(axon_fill_attrs), 1.0f};
const axon_scale_attrs kScale{sizeof(axon_scale_attrs), 2.0f};
const axon_fused_conv2d_attrs kFusedConv{sizeof(axon_fused_conv2d_attrs), kValid1, AXON_ACTIVATION_RELU};
const axon_fused_matmul_attrs kFusedMatMul{sizeof(axon_fused_matmul_attrs), kMatMulTb, AXON_ACTIVATION_NONE};
// conv VALID 3x3 on 8x8 -> 6x6, then pool 2x2 stride 2 -> 3x3
const axon_fused_conv2d_max_pool_attrs kConvPool{sizeof(axon_fused_conv2d_max_pool_attrs), kValid1,
                                                 AXON_ACTIVATION_RELU, kPool2};
const axon_leaky_relu_attrs kLeaky{sizeof(axon_leaky_relu_attrs), 0.3f};
const axon_clipped_relu_attrs kClipped{sizeof(axon_clipped_relu_attrs), 0.1f, 6.0f, 0.5f};
const axon_gelu_attrs kGelu{sizeof(axon_gelu_attrs), 1};
const axon_concat_attrs kConcatC{sizeof(axon_concat_attrs), 3};
const axon_slice_attrs kAt1{sizeof(axon_slice_attrs), {0, 1, 2, 0}};  // [2,3,2,3] at (0,1,2,0) of [2,7,5,3]
const axon_batch_norm_attrs kBnTrain{sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 1};
const axon_moving_average_attrs kMoving{sizeof(axon_moving_average_attrs), 0.99f, 0.01f};
const axon_fused_batch_norm_attrs kBnReluTrain{sizeof(axon_fused_batch_norm_attrs), kBnTrain, AXON_ACTIVATION_RELU};
const axon_sgd_attrs kSgd{sizeof(axon_sgd_attrs), 0.01f, 0.9f, 1};
const axon_rmsprop_attrs kRmsprop{sizeof(axon_rmsprop_attrs), 0.001f, 0.9f, 0.0f, 1e-7f, 1};
const axon_adagrad_attrs kAdagrad{sizeof(axon_adagrad_attrs), 0.001f, 1e-7f};
const axon_nadam_attrs kNadam{sizeof(axon_nadam_attrs), 0.001f, 0.9f, 0.999f, 1e-7f, 1, 0.45f};
const axon_weight_decay_attrs kWeightDecay{sizeof(axon_weight_decay_attrs), 0.001f, 0.004f};
const axon_clip_attrs kClip{sizeof(axon_clip_attrs), AXON_CLIP_NORM, 1.0f};
const axon_crossentropy_attrs kXent{sizeof(axon_crossentropy_attrs), 1, 0.1f};
const axon_regression_loss_attrs kHuber{sizeof(axon_regression_loss_attrs), AXON_LOSS_HUBER, 1.0f};
const axon_binary_accuracy_attrs kBinaryAccuracy{sizeof(axon_binary_accuracy_attrs), 0.5f};
const axon_in_top_k_attrs kInTopK{sizeof(axon_in_top_k_attrs), 3};
const axon_random_attrs kRandom{sizeof(axon_random_attrs), {1, 2}, {3, 4, 5, 6}, 2.0f, -1.0f};
const axon_reduce_attrs kReduce13{sizeof(axon_reduce_attrs), 2, {1, -1}, 0};  // [2,7,5,3] -> [2,5]
const axon_reduce_attrs kReduce1Keep{sizeof(axon_reduce_attrs), 1, {1}, 1};  // [2,7,5,3] -> [2,1,5,3]
const axon_reduce_attrs kReduceNone{sizeof(axon_reduce_attrs), 0, {}, 0};  // y = x
const axon_layer_norm_attrs kLayerNorm{sizeof(axon_layer_norm_attrs), 1e-6f};
// depthwise 3x3, multiplier 2, SAME stride 2 on 7x5x3 -> 4x3x6
const axon_conv2d_attrs kDepthwise = kSame2;

// A well-formed call of every op, in OpId order.
std::vector<Case> good_cases() {
  const axon_tensor x = tensor({2, 7, 5, 3}), f = tensor({3, 3, 3, 4}), y = tensor({2, 4, 3, 4});
  const axon_tensor logits = tensor({5, 10}), labels = tensor({5}, AXON_INT32), per_row = tensor({5});
  const axon_tensor img = tensor({1, 8, 8, 2}), f8 = tensor({3, 3, 2, 4}), pooled = tensor({1, 3, 3, 4});
  std::vector<Case> cases = {
      {OpId::Conv2D, {x, f}, {y}, &kSame2},
      {OpId::Conv2DBackpropInput, {y, f}, {x}, &kSame2},
      {OpId::Conv2DBackpropInputAccumulate, {x, y, f}, {}, &kSame2},
      {OpId::Conv2DBackpropFilter, {x, y}, {f}, &kSame2},
      {OpId::MaxPool, {tensor({2, 7, 5, 3})}, {tensor({2, 3, 2, 3})}, &kPool2},
      {OpId::MaxPoolGrad, {tensor({2, 7, 5, 3}), tensor({2, 3, 2, 3}), tensor({2, 3, 2, 3})}, {tensor({2, 7, 5, 3})},
       &kPool2},
      {OpId::Relu, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::ReluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::MatMul, {tensor({3, 4}), tensor({6, 4})}, {tensor({3, 6})}, &kMatMulTb},
      {OpId::BiasAdd, {tensor({3, 4}), tensor({4})}, {tensor({3, 4})}},
      {OpId::BiasAddGrad, {tensor({2, 3, 4})}, {tensor({4})}},
      {OpId::SparseSoftmaxCrossEntropyWithLogits, {logits, labels}, {per_row, logits}},
      {OpId::ApplyAdam, {tensor({7}), tensor({7}), tensor({7}), tensor({7})}, {}, &kAdam},
      {OpId::InTopK, {logits, labels}, {per_row}},
      {OpId::Sum, {tensor({3, 4})}, {tensor({1})}},
      {OpId::Fill, {}, {tensor({3, 4})}, &kFill},
      {OpId::Scale, {tensor({3, 4})}, {tensor({3, 4})}, &kScale},
      {OpId::AddN, {tensor({3}), tensor({3}), tensor({3})}, {tensor({3})}},
      {OpId::NormalizeImage, {tensor({2, 28, 28, 1}, AXON_UINT8)}, {tensor({2, 28, 28, 1})}},
      {OpId::Identity, {tensor({4}, AXON_INT64)}, {tensor({4}, AXON_INT64)}},
      {OpId::FusedConv2D, {img, f8, tensor({4})}, {tensor({1, 6, 6, 4})}, &kFusedConv},
      {OpId::FusedMatMul, {tensor({3, 4}), tensor({6, 4}), tensor({6})}, {tensor({3, 6})}, &kFusedMatMul},
      {OpId::FusedReluGradBiasAddGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4}), tensor({4})}},
      {OpId::FusedConv2DMaxPool, {img, f8, tensor({4})}, {pooled, tensor({1, 3, 3, 4}, AXON_UINT8)}, &kConvPool},
      {OpId::FusedConv2DMaxPoolGrad, {img, f8, pooled, tensor({1, 3, 3, 4}, AXON_UINT8)},
       {tensor({3, 3, 2, 4}), tensor({4}), img}, &kConvPool},
      {OpId::SparseCategoricalAccuracy, {logits, labels}, {per_row}},
      {OpId::Sigmoid, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Tanh, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Elu, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Selu, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Relu6, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Softplus, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Silu, {tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::SigmoidGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::TanhGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::EluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::SeluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Relu6Grad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::SoftplusGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::SiluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::LeakyRelu, {tensor({3, 4})}, {tensor({3, 4})}, &kLeaky},
      {OpId::LeakyReluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}, &kLeaky},
      {OpId::Gelu, {tensor({3, 4})}, {tensor({3, 4})}, &kGelu},
      {OpId::GeluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}, &kGelu},
      {OpId::ClippedRelu, {tensor({3, 4})}, {tensor({3, 4})}, &kClipped},
      {OpId::ClippedReluGrad, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}, &kClipped},
      {OpId::Softmax, {logits}, {logits}},
      {OpId::SoftmaxGrad, {logits, logits}, {logits}},
      {OpId::AvgPool, {tensor({2, 7, 5, 3})}, {tensor({2, 3, 2, 3})}, &kPool2},
      {OpId::AvgPoolGrad, {tensor({2, 3, 2, 3})}, {tensor({2, 7, 5, 3})}, &kPool2},
      {OpId::Sub, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Mul, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::Maximum, {tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4})}},
      {OpId::MaximumGrad, {tensor({3, 4}), tensor({3, 4}), tensor({3, 4})}, {tensor({3, 4}), tensor({3, 4})}},
      {OpId::ConcatV2, {tensor({2, 4, 3, 1}), tensor({2, 4, 3, 5})}, {tensor({2, 4, 3, 6})}, &kConcatC},
      {OpId::Slice, {tensor({2, 7, 5, 3})}, {tensor({2, 3, 2, 3})}, &kAt1},
      {OpId::Pad, {tensor({2, 3, 2, 3})}, {tensor({2, 7, 5, 3})}, &kAt1},
      {OpId::FusedBatchNormV3, {x, tensor({3}), tensor({3}), tensor({3}), tensor({3})},
       {x, tensor({3}), tensor({3}), tensor({3}), tensor({3})}, &kBnTrain},
      {OpId::FusedBatchNormGradV3, {x, x, tensor({3}), tensor({3}), tensor({3})}, {x, tensor({3}), tensor({3})},
       &kBnTrain},
      {OpId::MovingAverage, {tensor({3}), tensor({3})}, {}, &kMoving},
      {OpId::DepthwiseConv2dNative, {x, tensor({3, 3, 3, 2})}, {tensor({2, 4, 3, 6})}, &kDepthwise},
      {OpId::DepthwiseConv2dNativeBackpropInput, {tensor({2, 4, 3, 6}), tensor({3, 3, 3, 2})}, {x}, &kDepthwise},
      {OpId::DepthwiseConv2dNativeBackpropFilter, {x, tensor({2, 4, 3, 6})}, {tensor({3, 3, 3, 2})}, &kDepthwise},
      {OpId::FusedBatchNormEx, {x, tensor({3}), tensor({3}), tensor({3}), tensor({3})},
       {x, tensor({3}), tensor({3}), tensor({3}), tensor({3})}, &kBnReluTrain},
      {OpId::FusedBatchNormGradEx, {x, x, tensor({3}), tensor({3}), tensor({3}), x}, {x, tensor({3}), tensor({3})},
       &kBnReluTrain},
      {OpId::ApplySGD, {tensor({7}), tensor({7}), tensor({7})}, {}, &kSgd},
      {OpId::ApplyRMSprop, {tensor({7}), tensor({7}), tensor({7}), tensor({7}), tensor({7})}, {}, &kRmsprop},
      {OpId::ApplyAdamWithAmsgrad, {tensor({7}), tensor({7}), tensor({7}), tensor({7}), tensor({7})}, {}, &kAdam},
      {OpId::ApplyAdagrad, {tensor({7}), tensor({7}), tensor({7})}, {}, &kAdagrad},
      {OpId::ApplyNadam, {tensor({7}), tensor({7}), tensor({7}), tensor({7})}, {}, &kNadam},
      {OpId::ApplyWeightDecay, {tensor({7})}, {}, &kWeightDecay},
      {OpId::ClipGradients, {tensor({7}), tensor({2}, AXON_INT64)}, {}, &kClip},
      {OpId::CategoricalCrossentropy, {logits, labels}, {per_row, logits}, &kXent},
      {OpId::BinaryCrossentropy, {tensor({5, 1}), labels}, {per_row, tensor({5, 1})}, &kXent},
      {OpId::RegressionLoss, {logits, labels}, {per_row, logits}, &kHuber},
      {OpId::BinaryAccuracy, {tensor({5, 1}), labels}, {per_row}, &kBinaryAccuracy},
      {OpId::InTopKV2, {logits, labels}, {per_row}, &kInTopK},
      {OpId::StatelessRandomNormalV2, {}, {tensor({2, 3})}, &kRandom},
      {OpId::StatelessRandomUniformV2, {}, {tensor({7})}, &kRandom},
      {OpId::ReduceSum, {x}, {tensor({2, 5})}, &kReduce13},
      {OpId::Mean, {x}, {tensor({2, 1, 5, 3})}, &kReduce1Keep},
      {OpId::Max, {x}, {x}, &kReduceNone},
      {OpId::FusedBatchNormAddEx, {x, tensor({3}), tensor({3}), tensor({3}), tensor({3}), x},
       {x, tensor({3}), tensor({3}), tensor({3}), tensor({3})}, &kBnReluTrain},
      {OpId::FusedBatchNormAddGradEx, {x, x, tensor({3}), tensor({3}), tensor({3}), x}, {x, tensor({3}), tensor({3}), x},
       &kBnReluTrain},
      {OpId::LayerNorm, {tensor({6, 3}), tensor({3}), tensor({3})}, {tensor({6, 3}), tensor({6}), tensor({6})},
       &kLayerNorm},
      {OpId::LayerNormGrad, {tensor({6, 3}), tensor({6, 3}), tensor({3}), tensor({6}), tensor({6})},
       {tensor({6, 3}), tensor({3}), tensor({3})}, &kLayerNorm},
  };
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.op < b.op; });
  return cases;
}

}  // namespace

TEST_CASE("the op table has one row per op, unique names, and consistent slots", "[op_table]") {
  std::set<std::string> names;
  for (int i = 0; i < kOpCount; ++i) {
    const OpSchema& s = kOpTable[i];
    INFO(s.name);
    CHECK(static_cast<int>(s.id) == i);
    CHECK(names.insert(s.name).second);
    CHECK(find_op(s.name) == &s);
    int listed_in = 0, listed_out = 0;
    while (listed_in < kMaxSlots && s.inputs[listed_in].name != nullptr) ++listed_in;
    while (listed_out < kMaxSlots && s.outputs[listed_out].name != nullptr) ++listed_out;
    // Every slot a call may use is named (AddN's repeat the last one).
    CHECK(listed_in == (s.max_inputs < 0 ? s.min_inputs : s.max_inputs));
    CHECK(listed_out == s.max_outputs);
    CHECK(s.min_outputs <= s.max_outputs);
    CHECK(s.in_place_inputs <= s.min_inputs);
    CHECK(s.kernel_dtypes != 0);
    // ABI 1.10 was the last 1.x; no op is newer than this header.
    CHECK(((s.added.major == 1 && s.added.minor <= 10) ||
           (s.added.major == AXON_ABI_MAJOR && s.added.minor <= AXON_ABI_MINOR)));
    // Fused ops (names starting with '_') say what they stand for, and only they.
    CHECK(op_is_optional(s) == (s.name[0] == '_'));
    if (s.attrs != AttrKind::none) CHECK(attr_info(s.attrs).min_size > sizeof(size_t));
  }
  CHECK(find_op("NoSuchOp") == nullptr);
  CHECK(find_op("conv2d") == nullptr);  // names are exact, as TensorFlow's are
  CHECK(op_schema(OpId::ApplyAdam).in_place_inputs == 3);
}

TEST_CASE("the validator accepts a well-formed call of every op", "[op_table]") {
  const auto cases = good_cases();
  REQUIRE(cases.size() == static_cast<size_t>(kOpCount));
  std::set<OpId> seen;
  for (const Case& c : cases) {
    INFO(op_name(c.op));
    seen.insert(c.op);
    CHECK(c.why() == "");
  }
  CHECK(seen.size() == static_cast<size_t>(kOpCount));
}

TEST_CASE("the validator rejects a wrong output shape of every op that has outputs", "[op_table]") {
  for (Case c : good_cases()) {
    // Fill and the random ops take any shape, Pad any that holds x.
    if (c.out.empty() || c.op == OpId::Fill || c.op == OpId::Pad || c.op == OpId::StatelessRandomNormalV2 ||
        c.op == OpId::StatelessRandomUniformV2)
      continue;
    INFO(op_name(c.op));
    c.out[0].dims[c.out[0].rank - 1] += 1;  // the last dimension: a filter's height may legitimately vary
    CHECK_THAT(c.why(), StartsWith(std::string(op_name(c.op)) + ": "));
  }
}

TEST_CASE("the validator names the op and the tensor for each kind of malformed call", "[op_table]") {
  const auto cases = good_cases();
  Case conv = cases[static_cast<int>(OpId::Conv2D)];

  SECTION("counts") {
    Case c = conv;
    c.in.pop_back();
    CHECK(c.why() == "Conv2D: expected 2 inputs and 1 outputs, got 1 and 1");
    Case addn = cases[static_cast<int>(OpId::AddN)];
    addn.in.clear();
    CHECK(addn.why() == "AddN: expected at least 1 inputs and 1 outputs, got 0 and 1");
    Case grad = cases[static_cast<int>(OpId::FusedConv2DMaxPoolGrad)];
    grad.out.pop_back();  // dx is optional
    CHECK(grad.why() == "");
    grad.out.pop_back();
    CHECK_THAT(grad.why(), Contains("expected 4 inputs and 2 to 3 outputs, got 4 and 1"));
  }
  SECTION("dtype, rank, dims, data") {
    Case c = conv;
    c.in[1].dtype = AXON_INT32;
    CHECK(c.why() == "Conv2D: filter must be float32, got int32");
    c = conv;
    c.in[0].rank = 9;
    CHECK(c.why() == "Conv2D: x has invalid rank 9");
    c = conv;
    c.in[0].rank = 3;
    CHECK(c.why() == "Conv2D: x must have rank 4, got shape [2,7,5]");
    c = conv;
    c.in[0].dims[1] = -1;
    CHECK(c.why() == "Conv2D: x has a negative dimension [2,-1,5,3]");
    c = conv;
    c.out[0].data = nullptr;
    CHECK(c.why() == "Conv2D: y [2,4,3,4] has no data");
    c.out[0].dims[0] = 0;  // empty: no data needed, but the shape must still be [0,4,3,4]
    CHECK(c.why() == "Conv2D: y has shape [0,4,3,4], expected [2,4,3,4]");
    Case labels = cases[static_cast<int>(OpId::InTopK)];
    labels.in[1].dtype = AXON_FLOAT32;
    CHECK(labels.why() == "InTopK: labels must be int32, got float32");
    Case dt = cases[static_cast<int>(OpId::Relu)];
    dt.in[0].dtype = static_cast<axon_dtype>(7);
    CHECK(dt.why() == "Relu: no Relu kernel is defined for dtype unknown");
  }
  SECTION("attributes") {
    Case c = conv;
    c.attrs = nullptr;
    CHECK(c.why() == "Conv2D: attributes missing (axon_conv2d_attrs)");
    axon_conv2d_attrs small = kSame2;
    small.struct_size = 8;
    c.attrs = &small;
    CHECK_THAT(c.why(), StartsWith("Conv2D: attribute struct too small (axon_conv2d_attrs: 8 < "));
    axon_conv2d_attrs stride0 = kSame2;
    stride0.stride_w = 0;
    c.attrs = &stride0;
    CHECK(c.why() == "Conv2D: strides must be >= 1, got 2,0");
    axon_conv2d_attrs bad_padding = kSame2;
    const int seven = 7;
    std::memcpy(&bad_padding.padding, &seven, sizeof seven);
    c.attrs = &bad_padding;
    CHECK(c.why() == "Conv2D: unknown padding 7");
    Case fused = cases[static_cast<int>(OpId::FusedConv2D)];
    axon_fused_conv2d_attrs act = kFusedConv;
    act.activation = 2;
    fused.attrs = &act;
    CHECK(fused.why() == "_FusedConv2D: unknown activation 2");
    Case adam = cases[static_cast<int>(OpId::ApplyAdam)];
    axon_adam_attrs step0 = kAdam;
    step0.step = 0;
    adam.attrs = &step0;
    CHECK(adam.why() == "ApplyAdam: step must be >= 1, got 0");
    Case sgd = cases[static_cast<int>(OpId::ApplySGD)];
    axon_sgd_attrs negative = kSgd;
    negative.momentum = -0.5f;
    sgd.attrs = &negative;
    CHECK(sgd.why() == "ApplySGD: momentum must be in [0, 1], got -0.5");
    Case rms = cases[static_cast<int>(OpId::ApplyRMSprop)];
    axon_rmsprop_attrs rho = kRmsprop;
    rho.rho = 1.5f;
    rms.attrs = &rho;
    CHECK(rms.why() == "ApplyRMSprop: rho must be in [0, 1], got 1.5");
    Case clip = cases[static_cast<int>(OpId::ClipGradients)];
    axon_clip_attrs zero = kClip;
    zero.clip = 0;
    clip.attrs = &zero;
    CHECK(clip.why() == "ClipGradients: clip must be a positive number, got 0");
    Case xent = cases[static_cast<int>(OpId::CategoricalCrossentropy)];
    axon_crossentropy_attrs smoothing = kXent;
    smoothing.label_smoothing = 1.5f;
    xent.attrs = &smoothing;
    CHECK(xent.why() == "CategoricalCrossentropy: label_smoothing must be in [0, 1], got 1.5");
    Case huber = cases[static_cast<int>(OpId::RegressionLoss)];
    axon_regression_loss_attrs delta = kHuber;
    delta.delta = 0;
    huber.attrs = &delta;
    CHECK(huber.why() == "RegressionLoss: delta must be a positive number, got 0");
    Case top = cases[static_cast<int>(OpId::InTopKV2)];
    axon_in_top_k_attrs k0 = kInTopK;
    k0.k = 0;
    top.attrs = &k0;
    CHECK(top.why() == "InTopKV2: k must be >= 1, got 0");
  }
  SECTION("shape rules") {
    Case c = conv;
    c.in[1].dims[2] = 2;
    CHECK(c.why() == "Conv2D: filter [3,3,2,4] has 2 input channels, x [2,7,5,3] has 3");
    axon_conv2d_attrs valid = kValid1;
    c = conv;
    c.attrs = &valid;
    c.in[0].dims[2] = 2;  // a 3-wide window does not fit 2 columns
    CHECK(c.why() == "Conv2D: window 3x3 (dilated 3x3) is larger than x [2,7,2,3] with VALID padding");
    Case mm = cases[static_cast<int>(OpId::MatMul)];
    mm.in[1].dims[1] = 5;
    CHECK(mm.why() == "MatMul: inner dimensions differ: a [3,4], b [6,5]^T");
    Case bias = cases[static_cast<int>(OpId::BiasAdd)];
    bias.in[1].dims[0] = 3;
    CHECK(bias.why() == "BiasAdd: bias has shape [3], expected [4]");
    Case adam = cases[static_cast<int>(OpId::ApplyAdam)];
    adam.in[2].dims[0] = 6;
    CHECK(adam.why() == "ApplyAdam: v has shape [6], expected var's [7]");
    Case amsgrad = cases[static_cast<int>(OpId::ApplyAdamWithAmsgrad)];
    amsgrad.in[3].dims[0] = 8;
    CHECK(amsgrad.why() == "ApplyAdamWithAmsgrad: vhat has shape [8], expected var's [7]");
    Case clip = cases[static_cast<int>(OpId::ClipGradients)];
    clip.in[0] = tensor({7, 1});
    CHECK(clip.why() == "ClipGradients: grad must have rank 1, got shape [7,1]");
    bias = cases[static_cast<int>(OpId::BiasAdd)];
    bias.in[0] = tensor({4});
    bias.out[0] = tensor({4});
    CHECK(bias.why() == "BiasAdd: x must have rank >= 2, got shape [4]");  // TensorFlow's rule
    Case xent = cases[static_cast<int>(OpId::SparseSoftmaxCrossEntropyWithLogits)];
    xent.in[0] = xent.out[1] = tensor({5, 0});
    CHECK(xent.why() == "SparseSoftmaxCrossEntropyWithLogits: logits [5,0] have no classes");
    Case binary = cases[static_cast<int>(OpId::BinaryCrossentropy)];
    binary.in[0] = binary.out[1] = tensor({5, 3});
    CHECK(binary.why() == "BinaryCrossentropy: predictions must have 1 unit, got shape [5,3]");
    Case mse = cases[static_cast<int>(OpId::RegressionLoss)];
    mse.out[1] = tensor({5, 9});
    CHECK(mse.why() == "RegressionLoss: dpredictions has shape [5,9], expected predictions's [5,10]");
    Case sum = cases[static_cast<int>(OpId::Sum)];
    sum.out[0] = tensor({2});
    CHECK(sum.why() == "Sum: y must be a scalar ([] or [1]), got shape [2]");
    Case pool_grad = cases[static_cast<int>(OpId::FusedConv2DMaxPoolGrad)];
    pool_grad.in[3].dims[3] = 3;
    CHECK(pool_grad.why() == "_FusedConv2DMaxPoolGrad: argmax has shape [1,3,3,3], expected dy's [1,3,3,4]");
  }
}

TEST_CASE("TensorFlow's window sizes: SAME rounds up and pads the extra row after", "[op_table]") {
  // in 7, window 3, stride 2: SAME -> out 4, total padding 2 (1 before, 1 after);
  // in 6, window 3, stride 2: SAME -> out 3, total padding 1 (0 before, 1 after: the extra one).
  WindowAxis a = window_axis(7, 3, 2, 1, AXON_PADDING_SAME);
  CHECK((a.out == 4 && a.pad_before == 1 && a.pad_total == 2 && a.extra() == 0));
  a = window_axis(6, 3, 2, 1, AXON_PADDING_SAME);
  CHECK((a.out == 3 && a.pad_before == 0 && a.pad_total == 1 && a.extra() == 1));
  // VALID: (in - effective) / stride + 1; dilation 2 makes a 3-tap window 5 wide.
  a = window_axis(7, 3, 2, 2, AXON_PADDING_VALID);
  CHECK((a.out == 2 && a.pad_total == 0));
  CHECK(window_axis(4, 3, 1, 2, AXON_PADDING_VALID).out == 0);
}
