// The fusion pass: decides, once per replica, which neighbouring layers of
// a model's graph run as one fused op, and turns the graph into the plan a
// step runs (replica.hpp). A pair is a layer whose output only the next
// layer reads. The rules:
//  - a Conv2D (with a bias, linear or relu) and a MaxPooling2D (at most 255
//    taps) run as _FusedConv2DMaxPool / _FusedConv2DMaxPoolGrad where the
//    device the convolution goes to has both, else as the two layers (the
//    pair keeps its argmax from forward to backward, so dispatch cannot
//    lower it: it is chosen here, where both halves are known);
//  - a BatchNormalization and a ReLU (max(x, 0) itself) run as
//    _FusedBatchNormEx / _FusedBatchNormGradEx, which dispatch lowers to
//    their parts where a device lacks them;
//  - a BatchNormalization, an Add of it and one earlier tensor, and a ReLU
//    of the sum, each read only by the next, run as one step of two inputs
//    (_FusedBatchNormAddEx / _FusedBatchNormAddGradEx, lowered alike).
// No rule joins layers with fused ops turned off. The stateless fused
// ops of single layers (_FusedConv2D, _FusedMatMul,
// _FusedReluGradBiasAddGrad) need no pass: layers call them and dispatch
// lowers them where a device lacks them.
#pragma once

#include <axon/nn/replica.hpp>

#include <string>
#include <vector>

namespace axon::nn {

// One step per node, fused pairs and triples as one, in node order (the
// graph is topologically ordered) but for the readers of one tensor, which
// run back to back, the fewest forward FLOPs first (fusion.cpp).
std::vector<PlanStep> plan_steps(Graph& graph, TensorPool& pool);

// "conv2d + max_pooling2d -> _FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad",
// "batch_normalization + re_lu -> _FusedBatchNormEx, _FusedBatchNormGradEx",
// "batch_normalization_2 + add + re_lu_2 -> _FusedBatchNormAddEx, ..."
// for each fused step, for the placement log and --dry-run.
std::vector<std::string> describe_fusions(const std::vector<PlanStep>& plan);

}  // namespace axon::nn
