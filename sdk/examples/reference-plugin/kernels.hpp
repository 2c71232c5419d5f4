// The reference plugin's kernels: naive loops that accumulate in double.
#pragma once

#include <axon/plugin.hpp>

namespace ref {

// Every op of plugin_abi.h, keyed by (op, dtype of the first input/output).
const axon::sdk::KernelTable& kernel_table();

// kernels_layers.cpp: AvgPool, FusedBatchNormV3, DepthwiseConv2dNative and their gradients.
void add_layer_kernels(axon::sdk::KernelTable& t);

}  // namespace ref
