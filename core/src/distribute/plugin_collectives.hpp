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

}  // namespace axon::distribute
