// op_cost: FLOPs and bytes of one call per op kind, against values worked by
// hand from the shapes (each call is checked well-formed by the validator
// first, as dispatch does).
#include "op_call_parts.hpp"

#include <axon/op_cost.hpp>
#include <axon/op_table.hpp>
#include <axon/op_validate.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace axon;
using namespace axon::test;

namespace {

// The cost of a call, which must be well-formed.
OpCost cost(OpId op, std::vector<axon_tensor> in, std::vector<axon_tensor> out, const void* attrs = nullptr) {
  axon_kernel_call c{};
  c.struct_size = sizeof c;
  c.op = op_name(op);
  c.num_inputs = static_cast<int32_t>(in.size());
  c.inputs = in.data();
  c.num_outputs = static_cast<int32_t>(out.size());
  c.outputs = out.data();
  c.attrs = attrs;
  std::string why;
  const bool well_formed = validate_call(op_schema(op), c, &why);
  INFO(why);
  REQUIRE(well_formed);
  return op_cost(op, c);
}

}  // namespace

TEST_CASE("op_cost: convolutions and their gradients count 2 N OH OW KH KW C K", "[op_cost]") {
  // x [2,5,5,3], filter [3,3,3,4], VALID: y [2,3,3,4]; 2 * 2*3*3 * 3*3*3 * 4 = 3888.
  const axon_conv2d_attrs valid = conv(1, AXON_PADDING_VALID);
  const auto x = tensor({2, 5, 5, 3}), f = tensor({3, 3, 3, 4}), y = tensor({2, 3, 3, 4});
  const int64_t bytes = 4 * (150 + 108 + 72);
  const OpCost fwd = cost(OpId::Conv2D, {x, f}, {y}, &valid);
  CHECK(fwd.flops == 3888);
  CHECK(fwd.bytes == bytes);
  const OpCost dx = cost(OpId::Conv2DBackpropInput, {y, f}, {x}, &valid);
  CHECK(dx.flops == 3888);
  CHECK(dx.bytes == bytes);
  const OpCost df = cost(OpId::Conv2DBackpropFilter, {x, y}, {f}, &valid);
  CHECK(df.flops == 3888);
  CHECK(df.bytes == bytes);
  // SAME, stride 2: x [1,5,5,3] -> y [1,3,3,4]; 2 * 9 * 27 * 4 = 1944.
  const axon_conv2d_attrs same2 = conv(2, AXON_PADDING_SAME);
  CHECK(cost(OpId::Conv2D, {tensor({1, 5, 5, 3}), f}, {tensor({1, 3, 3, 4})}, &same2).flops == 1944);
  // Depthwise, x [1,4,4,2], filter [3,3,2,2] (multiplier 2): y [1,2,2,4];
  // 2 * 4 pixels * 9 taps * 2 channels * 2 = 288.
  const auto dx_in = tensor({1, 4, 4, 2}), df_in = tensor({3, 3, 2, 2}), dy = tensor({1, 2, 2, 4});
  CHECK(cost(OpId::DepthwiseConv2dNative, {dx_in, df_in}, {dy}, &valid).flops == 288);
  CHECK(cost(OpId::DepthwiseConv2dNativeBackpropInput, {dy, df_in}, {dx_in}, &valid).flops == 288);
  CHECK(cost(OpId::DepthwiseConv2dNativeBackpropFilter, {dx_in, dy}, {df_in}, &valid).flops == 288);
}

TEST_CASE("op_cost: MatMul counts 2 M N K, transposed or not", "[op_cost]") {
  axon_matmul_attrs plain{sizeof(axon_matmul_attrs), 0, 0}, ta{sizeof(axon_matmul_attrs), 1, 0};
  const OpCost c = cost(OpId::MatMul, {tensor({3, 5}), tensor({5, 7})}, {tensor({3, 7})}, &plain);
  CHECK(c.flops == 2 * 3 * 7 * 5);
  CHECK(c.bytes == 4 * (15 + 35 + 21));
  CHECK(cost(OpId::MatMul, {tensor({5, 3}), tensor({5, 7})}, {tensor({3, 7})}, &ta).flops == 210);
  axon_fused_matmul_attrs fm{};
  fm.struct_size = sizeof fm;
  fm.matmul = plain;
  fm.activation = AXON_ACTIVATION_RELU;  // + bias add and relu per element of c
  const OpCost f = cost(OpId::FusedMatMul, {tensor({3, 5}), tensor({5, 7}), tensor({7})}, {tensor({3, 7})}, &fm);
  CHECK(f.flops == 210 + 2 * 21);
  CHECK(f.bytes == 4 * (15 + 35 + 7 + 21));
  fm.activation = AXON_ACTIVATION_NONE;
  CHECK(cost(OpId::FusedMatMul, {tensor({3, 5}), tensor({5, 7}), tensor({7})}, {tensor({3, 7})}, &fm).flops == 231);
}

TEST_CASE("op_cost: fused convolutions count the sum of their parts", "[op_cost]") {
  const auto x = tensor({2, 6, 6, 3}), f = tensor({3, 3, 3, 4}), bias = tensor({4});
  // Conv2D into [2,4,4,4] (128 elements): 2 * 32 * 27 * 4 = 6912.
  axon_fused_conv2d_attrs fc{};
  fc.struct_size = sizeof fc;
  fc.conv = conv(1, AXON_PADDING_VALID);
  fc.activation = AXON_ACTIVATION_RELU;
  CHECK(cost(OpId::FusedConv2D, {x, f, bias}, {tensor({2, 4, 4, 4})}, &fc).flops == 6912 + 2 * 128);

  // + bias and relu on 128, MaxPool 2x2 into [2,2,2,4]: 32 outputs x 4 taps.
  axon_fused_conv2d_max_pool_attrs a{};
  a.struct_size = sizeof a;
  a.conv = fc.conv;
  a.activation = AXON_ACTIVATION_RELU;
  a.pool = pool(2, 2, AXON_PADDING_VALID);
  const auto y = tensor({2, 2, 2, 4}), argmax = tensor({2, 2, 2, 4}, AXON_UINT8);
  const OpCost fwd = cost(OpId::FusedConv2DMaxPool, {x, f, bias}, {y, argmax}, &a);
  CHECK(fwd.flops == 6912 + 256 + 128);
  CHECK(fwd.bytes == 4 * (216 + 108 + 4 + 32) + 32);
  // The gradient: MaxPoolGrad (128), ReluGrad and BiasAddGrad (128 each),
  // the filter's gradient and, with dx asked for, the input's (6912 each).
  const OpCost grad = cost(OpId::FusedConv2DMaxPoolGrad, {x, f, y, argmax}, {f, bias, x}, &a);
  CHECK(grad.flops == 128 + 256 + 2 * 6912);
  CHECK(grad.bytes == 4 * (216 + 108 + 32) + 32 + 4 * (108 + 4 + 216));
  const OpCost no_dx = cost(OpId::FusedConv2DMaxPoolGrad, {x, f, y, argmax}, {f, bias}, &a);
  CHECK(no_dx.flops == 128 + 256 + 6912);
  CHECK(no_dx.bytes == 4 * (216 + 108 + 32) + 32 + 4 * (108 + 4));
}

TEST_CASE("op_cost: pooling counts a FLOP per window tap of each pooled element", "[op_cost]") {
  const axon_pool_attrs p = pool(2, 2, AXON_PADDING_VALID);
  const auto x = tensor({1, 4, 4, 2}), y = tensor({1, 2, 2, 2});  // 8 pooled elements x 4 taps
  CHECK(cost(OpId::MaxPool, {x}, {y}, &p).flops == 32);
  CHECK(cost(OpId::AvgPool, {x}, {y}, &p).flops == 32);
  const OpCost g = cost(OpId::MaxPoolGrad, {x, y, y}, {x}, &p);
  CHECK(g.flops == 32);
  CHECK(g.bytes == 4 * (32 + 8 + 8 + 32));
  CHECK(cost(OpId::AvgPoolGrad, {y}, {x}, &p).flops == 32);
}

TEST_CASE("op_cost: batch normalization, elementwise ops and the optimizer by elements", "[op_cost]") {
  // x [2,3,3,4]: 72 elements, 4 channels.
  const auto x = tensor({2, 3, 3, 4}), ch = tensor({4});
  axon_batch_norm_attrs bn{};
  bn.struct_size = sizeof bn;
  bn.epsilon = 1e-3f;
  bn.exponential_avg_factor = 1;
  bn.is_training = 1;
  const OpCost fwd = cost(OpId::FusedBatchNormV3, {x, ch, ch, ch, ch}, {x, ch, ch, ch, ch}, &bn);
  CHECK(fwd.flops == 4 * 72);
  CHECK(fwd.bytes == 2 * 4 * (72 + 16));
  CHECK(cost(OpId::FusedBatchNormGradV3, {x, x, ch, ch, ch}, {x, ch, ch}, &bn).flops == 8 * 72);
  axon_fused_batch_norm_attrs ex{};
  ex.struct_size = sizeof ex;
  ex.batch_norm = bn;
  ex.activation = AXON_ACTIVATION_RELU;  // + one per element for relu and its gradient
  CHECK(cost(OpId::FusedBatchNormEx, {x, ch, ch, ch, ch}, {x, ch, ch, ch, ch}, &ex).flops == 5 * 72);
  CHECK(cost(OpId::FusedBatchNormGradEx, {x, x, ch, ch, ch, x}, {x, ch, ch}, &ex).flops == 9 * 72);

  const OpCost relu = cost(OpId::Relu, {tensor({2, 3})}, {tensor({2, 3})});
  CHECK(relu.flops == 6);
  CHECK(relu.bytes == 48);
  CHECK(cost(OpId::ReluGrad, {tensor({2, 3}), tensor({2, 3})}, {tensor({2, 3})}).bytes == 72);
  CHECK(cost(OpId::AddN, {tensor({4}), tensor({4}), tensor({4})}, {tensor({4})}).flops == 8);
  CHECK(cost(OpId::BiasAddGrad, {tensor({5, 4})}, {tensor({4})}).flops == 20);
  // Reductions: one add or compare per element reduced; the random ops per element drawn.
  axon_reduce_attrs axis0{};
  axis0.struct_size = sizeof axis0;
  axis0.num_axes = 1;
  CHECK(cost(OpId::ReduceSum, {tensor({5, 4})}, {tensor({4})}, &axis0).flops == 20);
  CHECK(cost(OpId::Max, {tensor({5, 4})}, {tensor({4})}, &axis0).bytes == 4 * (20 + 4));
  axon_random_attrs random{};
  random.struct_size = sizeof random;
  random.scale = 1.0f;
  CHECK(cost(OpId::StatelessRandomNormalV2, {}, {tensor({8})}, &random).flops == 8 * (15 + 20 + 2));
  CHECK(cost(OpId::StatelessRandomUniformV2, {}, {tensor({8})}, &random).bytes == 32);
  // Copies compute nothing; they still move their bytes.
  axon_fill_attrs fill{};
  fill.struct_size = sizeof fill;
  const OpCost filled = cost(OpId::Fill, {}, {tensor({10})}, &fill);
  CHECK(filled.flops == 0);
  CHECK(filled.bytes == 40);
  const OpCost copy = cost(OpId::Identity, {tensor({3}, AXON_INT64)}, {tensor({3}, AXON_INT64)});
  CHECK(copy.flops == 0);
  CHECK(copy.bytes == 48);
  // The loss: 4 per logit (the softmax); its tensors: logits, int32 labels, loss, dlogits.
  const OpCost loss = cost(OpId::SparseSoftmaxCrossEntropyWithLogits, {tensor({4, 10}), tensor({4}, AXON_INT32)},
                           {tensor({4}), tensor({4, 10})});
  CHECK(loss.flops == 160);
  CHECK(loss.bytes == 160 + 16 + 16 + 160);

  // Adam updates var, m and v in place: each read and written.
  axon_adam_attrs adam{};
  adam.struct_size = sizeof adam;
  adam.learning_rate = 1e-3f;
  adam.beta_1 = 0.9f;
  adam.beta_2 = 0.999f;
  adam.epsilon = 1e-7f;
  adam.step = 1;
  const auto v = tensor({10});
  const OpCost a = cost(OpId::ApplyAdam, {v, v, v, v}, {}, &adam);
  CHECK(a.flops == 12 * 10);
  CHECK(a.bytes == 3 * 2 * 40 + 40);
}
