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

// --device given: that device; if it does not exist, a warning and the CPU
// (UsageError naming the devices there are under --strict-placement).
// Otherwise the runtime's default device. Either way the device is opened
// here: a plugin that fails to start a device the user named (--device, or
// --visible-devices), or that failed to load and would have given its type,
// is a UsageError with the plugin's message, never a quiet CPU run.
DeviceChoice choose_device(const Runtime& rt, const std::optional<std::string>& requested);

// Opens each device (a strategy's replicas) before training; a failure is a
// UsageError naming the plugin when --visible-devices named the device,
// else the RuntimeError of the open.
void start_devices(const Runtime& rt, const std::vector<Device*>& devices);
// Opens a device the user named (`named_by`: "--compare toy:0"); UsageError
// "<named_by>: plugin P failed to start: <its message>" when it cannot.
void start_device(Device& device, const std::string& named_by, const char* joiner = ": ");

std::string device_list(const Runtime& rt);  // "/device:CPU:0, /device:CPU:1"

}  // namespace axon::train_app
