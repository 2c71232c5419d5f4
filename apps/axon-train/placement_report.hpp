// --dry-run and --strict-placement: the placement of one training step
// (nn::Model::plan_train_step) as a table, and the kernels it lacks.
#pragma once

#include <axon/placement_plan.hpp>

#include <cstdio>
#include <string>

namespace axon::train_app {

// Every (op, dtype, layer) with its device, each fallback with what moved
// along, then the missing kernels (or that there are none).
void print_placement_plan(std::FILE* out, const PlacementPlan& plan, const std::string& device);

// "3 kernels this model needs are missing on /device:TOY:0: Conv2D float32
// (conv2d, conv2d_1), ..."; empty when none are.
std::string missing_kernels_message(const PlacementPlan& plan, const std::string& device);

}  // namespace axon::train_app
