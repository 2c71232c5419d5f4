// Checks of the device table beyond the kernels: list_ops against
// get_kernel, the allocator (alignment, memory_info's accounting) and the
// copies. Each adds its checks to the report.
#pragma once

#include "report.hpp"

#include <axon/plugin_abi.h>

namespace axon::plugin_check {

// The alignment every allocation must have: a cache line. Neither the ABI nor
// the guide states a number; the SDK's examples and axon's CPU plugin give
// 64 bytes, and the views axon makes into one allocation (at 256-byte
// offsets) have only the alignment of its start.
inline constexpr size_t kAlignment = 64;

void check_list_ops(const axon_device_api& api, Report& report);
void check_allocator(const axon_device_api& api, Report& report);
void check_copies(const axon_device_api& api, Report& report);

}  // namespace axon::plugin_check
