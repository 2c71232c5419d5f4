// The CPU plugin's kernel table; each source file registers its own ops.
#pragma once

#include <axon/plugin.hpp>

namespace axon::cpu {

const sdk::KernelTable& kernel_table();

void add_conv_kernels(sdk::KernelTable& t);  // conv.cpp
void add_pool_kernels(sdk::KernelTable& t);  // pool.cpp
void add_math_kernels(sdk::KernelTable& t);  // math.cpp

}  // namespace axon::cpu
