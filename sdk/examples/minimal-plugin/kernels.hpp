// The TOY device's kernels (kernels.cpp).
#pragma once

#include <axon/plugin.hpp>

namespace toy {

// (op, dtype) -> kernel; an op missing here runs on the CPU device instead.
const axon::sdk::KernelTable& kernel_table();

}  // namespace toy
