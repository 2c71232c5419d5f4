// The fusion pass: decides, once per replica, which neighbouring layers of
// a model's graph run as one fused op, and turns the graph into the plan a
// step runs (replica.hpp). Today's rule: a Conv2D (with a bias, linear or
// relu) whose output only a MaxPooling2D (at most 255 taps) reads runs with
// it as _FusedConv2DMaxPool / _FusedConv2DMaxPoolGrad where the device the
// convolution goes to has both, else as the two layers. The stateless fused
// ops (_FusedConv2D, _FusedMatMul, _FusedReluGradBiasAddGrad) need no pass:
// layers call them and dispatch lowers them to their parts where a device
// lacks them; this pair keeps its argmax from forward to backward, so it is
// chosen here, where both halves are known.
#pragma once

#include <axon/nn/replica.hpp>

#include <string>
#include <vector>

namespace axon::nn {

// One step per node in node order (the graph is topologically ordered),
// fused pairs as one.
std::vector<PlanStep> plan_steps(Graph& graph, TensorPool& pool);

// "conv2d + max_pooling2d -> _FusedConv2DMaxPool, _FusedConv2DMaxPoolGrad"
// for each fused step, for the placement log and --dry-run.
std::vector<std::string> describe_fusions(const std::vector<PlanStep>& plan);

}  // namespace axon::nn
