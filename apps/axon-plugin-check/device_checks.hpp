// Checks of the device table beyond the kernels: list_ops against
// get_kernel, the allocator (alignment, memory_info's accounting) and the
// copies. Each adds its checks to the report.
#pragma once

#include "report.hpp"

#include <axon/plugin_abi.h>

namespace axon::plugin_check {

// The alignment every allocation must have (plugin_abi.h).
inline constexpr size_t kAlignment = AXON_ALLOCATION_ALIGNMENT;

void check_list_ops(const axon_device_api& api, Report& report);
void check_allocator(const axon_device_api& api, Report& report);
void check_copies(const axon_device_api& api, Report& report);

}  // namespace axon::plugin_check
