// tf.config and tf.debugging for C++: which devices there are, which of them
// axon uses, how GPU memory is taken, and whether placement is logged.
// Physical devices are what the plugins offer; logical devices are what ops
// run on (after visibility and logical-device settings), named
// "/device:GPU:0". Settings that change devices must come before the devices
// are initialised: list_logical_devices, a tensor or op, a model or a strategy
// initialises them, and a later change throws axon::RuntimeError with
// TensorFlow's message ("Visible devices cannot be modified after being
// initialized").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace axon {

// tf.config.PhysicalDevice: name "/physical_device:GPU:0", device_type "GPU".
struct PhysicalDevice {
  std::string name;
  std::string device_type;
  bool operator==(const PhysicalDevice&) const = default;
};

// tf.config.LogicalDevice: name "/device:GPU:0", device_type "GPU".
struct LogicalDevice {
  std::string name;
  std::string device_type;
  bool operator==(const LogicalDevice&) const = default;
};

namespace config {

// The devices the plugins offer, of one type ("GPU", "CPU"; case-insensitive;
// empty: all). Loads the plugins on first use; initialises no device.
std::vector<PhysicalDevice> list_physical_devices(const std::string& device_type = {});
// The devices ops may run on; initialises them (opens every one listed).
std::vector<LogicalDevice> list_logical_devices(const std::string& device_type = {});

// Makes only `devices` of `device_type` visible (empty: none of that type);
// devices of other types stay as they are. Every device must be of that
// type (UsageError otherwise). One device: set_visible_devices({gpus[0]}, "GPU").
void set_visible_devices(const std::vector<PhysicalDevice>& devices, const std::string& device_type = {});
std::vector<PhysicalDevice> get_visible_devices(const std::string& device_type = {});

// tf.config.LogicalDeviceConfiguration: a GPU's memory limit in MiB.
struct LogicalDeviceConfiguration {
  std::optional<int64_t> memory_limit;
};
// A GPU: one configuration, its memory limit (axon applies one limit to every
// GPU). The CPU: one configuration per logical CPU device (2: /device:CPU:0
// and /device:CPU:1, the cores divided among them). Anything else is a
// UsageError saying what axon supports.
void set_logical_device_configuration(const PhysicalDevice& device,
                                      const std::vector<LogicalDeviceConfiguration>& logical_devices);

// Soft placement (the default): an op a device lacks runs on the CPU with one
// warning. Off: it throws axon::RuntimeError naming the op and the device.
void set_soft_device_placement(bool enabled);
bool get_soft_device_placement();

namespace experimental {
// GPU memory taken as it is needed instead of reserved at start (axon applies
// it to every GPU). Before the devices are initialised.
void set_memory_growth(const PhysicalDevice& device, bool enable);
bool get_memory_growth(const PhysicalDevice& device);
}  // namespace experimental

}  // namespace config

namespace debugging {
// Prints "Executing op MatMul in device /device:CPU:0" to stderr once per
// (op, layer, device). Any time.
void set_log_device_placement(bool enabled);
}  // namespace debugging

}  // namespace axon
