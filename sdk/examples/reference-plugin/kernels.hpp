// The reference plugin's kernels: naive loops that accumulate in double.
#pragma once

#include <axon/plugin.hpp>

#include <string>

namespace ref {

// Every op of plugin_abi.h, keyed by (op, dtype of the first input/output).
const axon::sdk::KernelTable& kernel_table();

// Every kernel is registered behind the op table's validator (op_validate.hpp):
// counts, dtypes, ranks, shapes and attributes are checked before it runs, so
// a kernel checks only what lies in the data (labels, argmax taps).
template <axon::OpId Op, void (*F)(axon::sdk::Device&, const axon::sdk::KernelCall&)>
void add(axon::sdk::KernelTable& t) {
  axon::sdk::add_validated<Op, axon::sdk::Device, F>(t);
}

// The elementwise ops of ABI 1.4 and the shape ops (kernels_elementwise.cpp).
void add_elementwise_kernels(axon::sdk::KernelTable& t);

// kernels_layers.cpp: AvgPool, FusedBatchNormV3, DepthwiseConv2dNative and their gradients.
void add_layer_kernels(axon::sdk::KernelTable& t);

// kernels_losses.cpp: the losses of ABI 1.7 and BinaryAccuracy.
void add_loss_kernels(axon::sdk::KernelTable& t);

// kernels_random.cpp: ABI 1.9's StatelessRandomNormalV2 and StatelessRandomUniformV2.
void add_random_kernels(axon::sdk::KernelTable& t);

// kernels_reduce.cpp: ABI 1.9's ReduceSum, Mean and Max over axes.
void add_reduce_kernels(axon::sdk::KernelTable& t);

}  // namespace ref
