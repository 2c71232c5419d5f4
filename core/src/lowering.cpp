#include "lowering.hpp"

#include <axon/error.hpp>
#include <axon/ops.hpp>
#include <axon/tensor_pool.hpp>

namespace axon {

bool lowerable(OpId op) {
  switch (op) {
    case OpId::FusedConv2D:
    case OpId::FusedMatMul:
    case OpId::FusedReluGradBiasAddGrad:
    case OpId::SparseCategoricalAccuracy:
    case OpId::FusedBatchNormEx:
    case OpId::FusedBatchNormGradEx:
    case OpId::FusedBatchNormAddEx:
    case OpId::FusedBatchNormAddGradEx:
    case OpId::Conv2DBackpropInputAccumulate: return true;
    default: return false;
  }
}

void run_lowered(const OpCall& call, Device& device) {
  DeviceScope scope(device);
  const std::string layer(call.layer);
  const Tensor& in0 = *call.inputs[0];
  switch (call.op) {
    case OpId::FusedConv2D:
    case OpId::FusedMatMul: {
      const Tensor& b = *call.inputs[1];
      const Tensor& bias = *call.inputs[2];
      Tensor& y = *call.outputs[0];
      const bool conv = call.op == OpId::FusedConv2D;
      const int32_t activation = conv ? static_cast<const axon_fused_conv2d_attrs*>(call.attrs)->activation
                                      : static_cast<const axon_fused_matmul_attrs*>(call.attrs)->activation;
      // With relu the product and bias go to a temporary, as Relu does not
      // promise to run in place; BiasAdd does.
      Tensor z = activation == AXON_ACTIVATION_RELU ? scratch_like(y) : y;
      if (conv) {
        ops::conv2d(in0, b, z, static_cast<const axon_fused_conv2d_attrs*>(call.attrs)->conv, layer);
      } else {
        const auto& m = static_cast<const axon_fused_matmul_attrs*>(call.attrs)->matmul;
        ops::matmul(in0, b, z, m.transpose_a != 0, m.transpose_b != 0, layer);
      }
      ops::bias_add(z, bias, z, layer);
      if (activation == AXON_ACTIVATION_RELU) ops::relu(z, y, layer);
      return;
    }
    case OpId::FusedReluGradBiasAddGrad:
      ops::relu_grad(in0, *call.inputs[1], *call.outputs[0], layer);
      ops::bias_add_grad(*call.outputs[0], *call.outputs[1], layer);
      return;
    case OpId::FusedBatchNormEx:
    case OpId::FusedBatchNormAddEx: {
      const auto& a = *static_cast<const axon_fused_batch_norm_attrs*>(call.attrs);
      Tensor& y = *call.outputs[0];
      const bool relu = a.activation == AXON_ACTIVATION_RELU, side = call.op == OpId::FusedBatchNormAddEx;
      // The normalised values, and their sum with the side input, go to
      // temporaries where a later part writes y (neither AddN nor Relu
      // promises to run in place).
      Tensor z = relu || side ? scratch_like(y) : y, sum = side && relu ? scratch_like(y) : y;
      const Tensor &scale = *call.inputs[1], &offset = *call.inputs[2], &mean = *call.inputs[3],
                   &variance = *call.inputs[4];
      if (call.outputs.size() == 1)
        ops::fused_batch_norm(in0, scale, offset, mean, variance, z, a.batch_norm, layer);
      else
        ops::fused_batch_norm_training(in0, scale, offset, mean, variance, z, *call.outputs[1], *call.outputs[2],
                                       *call.outputs[3], *call.outputs[4], a.batch_norm, layer);
      if (side) ops::add_n({&z, call.inputs[5]}, sum, layer);
      if (relu) ops::relu(side ? sum : z, y, layer);
      return;
    }
    case OpId::FusedBatchNormGradEx: {
      const auto& a = *static_cast<const axon_fused_batch_norm_attrs*>(call.attrs);
      Tensor d = in0;
      if (a.activation == AXON_ACTIVATION_RELU) {
        d = scratch_like(in0);
        ops::relu_grad(in0, *call.inputs[5], d, layer);
      }
      ops::fused_batch_norm_grad(d, *call.inputs[1], *call.inputs[2], *call.inputs[3], *call.inputs[4],
                                 *call.outputs[0], *call.outputs[1], *call.outputs[2], a.batch_norm, layer);
      return;
    }
    case OpId::FusedBatchNormAddGradEx: {
      const auto& a = *static_cast<const axon_fused_batch_norm_attrs*>(call.attrs);
      Tensor& side = *call.outputs[3];
      if (a.activation == AXON_ACTIVATION_RELU)
        ops::relu_grad(in0, *call.inputs[5], side, layer);
      else
        ops::identity(in0, side, layer);
      ops::fused_batch_norm_grad(side, *call.inputs[1], *call.inputs[2], *call.inputs[3], *call.inputs[4],
                                 *call.outputs[0], *call.outputs[1], *call.outputs[2], a.batch_norm, layer);
      return;
    }
    case OpId::Conv2DBackpropInputAccumulate: {
      // AddN does not promise to run in place: the sum goes to a temporary
      // and is copied back.
      Tensor dx = in0;  // a handle on the tensor updated in place
      Tensor part = scratch_like(dx), sum = scratch_like(dx);
      ops::conv2d_backprop_input(*call.inputs[1], *call.inputs[2], part,
                                 *static_cast<const axon_conv2d_attrs*>(call.attrs), layer);
      ops::add_n({&dx, &part}, sum, layer);
      ops::identity(sum, dx, layer);
      return;
    }
    case OpId::SparseCategoricalAccuracy:
      // InTopK counts a tie for the largest logit as correct; Keras' accuracy
      // gives it to the lower index. The two differ only at ties.
      ops::in_top_k(in0, *call.inputs[1], *call.outputs[0], layer);
      return;
    default: break;
  }
  throw RuntimeError(std::string("op ") + op_name(call.op) + " has no lowering");
}

}  // namespace axon
