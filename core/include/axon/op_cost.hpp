// What one op call computes and moves, for roofline reports (profile.hpp
// sums it per op while op profiling is on). Counted from the op table's row
// and the call's shapes and attributes, in op_cost.cpp only:
//  - FLOPs: convolutions and their gradients 2 * N * OH * OW * KH * KW * C * K
//    (conv_geometry), depthwise ones the same with K = the channel
//    multiplier, MatMul 2 * M * N * K; batch normalization 4 per element
//    forward and 8 backward (as the layers count them); pooling one per
//    window tap of each output (or dy) element; the other elementwise ops a
//    few per element, listed in op_cost.cpp; copies (Identity, Slice, Pad,
//    ConcatV2, Fill) none. A fused op counts the sum of its parts.
//  - bytes: every input and output tensor once; an input updated in place
//    (ApplyAdam, MovingAverage) twice, read and written.
#pragma once

#include <axon/op_table.hpp>

#include <cstdint>

namespace axon {

struct OpCost {
  int64_t flops = 0;
  int64_t bytes = 0;
};

// The cost of a well-formed call (op_validate.hpp's validate_call passed).
OpCost op_cost(OpId op, const axon_kernel_call& call);

}  // namespace axon
