// Checks of the device table beyond the kernels: list_ops against
// get_kernel, the allocator (alignment, memory_info's accounting), the
// copies and the events. Each adds its checks to the report.
#pragma once

#include "report.hpp"

#include <axon/plugin_abi.h>

namespace axon::plugin_check {

// The alignment every allocation must have (plugin_abi.h).
inline constexpr size_t kAlignment = AXON_ALLOCATION_ALIGNMENT;

void check_list_ops(const axon_device_api& api, Report& report);
void check_allocator(const axon_device_api& api, Report& report);
void check_copies(const axon_device_api& api, Report& report);
// Streams, events and asynchronous copies: all or none; a point recorded
// after work is reached only when the work is done (query, synchronize);
// a wait for it orders later work, on any stream; copies through host memory
// round-trip; a kernel call queued on a stream computes between its copies.
void check_events(const axon_device_api& api, Report& report);

}  // namespace axon::plugin_check
