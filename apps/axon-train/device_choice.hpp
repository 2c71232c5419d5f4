// Which device axon-train trains on, and the reason it prints at start-up.
#pragma once

#include <axon/runtime.hpp>

#include <optional>
#include <string>

namespace axon::train_app {

struct DeviceChoice {
  Device* device = nullptr;
  std::string reason;  // "--device cpu:0", "the highest-priority visible device", ...
};

// Why there is no device of `type` ("GPU"): the plugin's reason, exclusions,
// or "no plugin provides GPU devices".
std::string why_no_device(const Runtime& rt, const std::string& type);

// --device given: that device; if it does not exist, a warning and the CPU
// (UsageError naming the devices there are under --strict-placement).
// Otherwise the runtime's default device.
DeviceChoice choose_device(const Runtime& rt, const std::optional<std::string>& requested);

std::string device_list(const Runtime& rt);  // "/device:CPU:0, /device:CPU:1"

}  // namespace axon::train_app
