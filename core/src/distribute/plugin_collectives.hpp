// The in-process all-reduce of a plugin's devices (axon_collective_api), as
// mirrored and multi-worker use it for the replicas of one process.
#pragma once

#include <axon/device.hpp>
#include <axon/tensor.hpp>

#include <string>
#include <vector>

namespace axon::distribute {

// UsageError unless every device comes from one plugin (naming each device
// and its plugin otherwise) and, for more than one device, that plugin has an
// in-process all-reduce. `strategy` prefixes the message.
void check_one_plugin(const std::vector<Device*>& devices, const std::string& strategy);

// Sums buffers[i] (on devices[i]) in place with the plugin's all_reduce.
// Does nothing for one device whose plugin has none.
void plugin_all_reduce(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers,
                       const std::string& what, int64_t step);

// Whether the plugin can queue the all-reduce of these devices
// (all_reduce_async, and events on every device).
bool plugin_queues_all_reduce(const std::vector<Device*>& devices);

// plugin_all_reduce queued with all_reduce_async: device i's share after
// ready[i], done[i] recorded after it; returns once queued.
void plugin_all_reduce_queued(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers,
                              const std::string& what, int64_t step, const std::vector<axon_event>& ready,
                              const std::vector<axon_event>& done);

}  // namespace axon::distribute
