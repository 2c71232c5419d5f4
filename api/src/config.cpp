// axon::config and axon::debugging over the runtime's settings (the same
// Config fields axon-train's device flags set).
#include "context.hpp"

#include <axon/api/config.hpp>
#include <axon/error.hpp>

#include <algorithm>

namespace axon {
namespace {

using api_detail::device_type;
using api_detail::runtime;

const char* const kVisibleMessage = "Visible devices cannot be modified after being initialized";
const char* const kPhysicalMessage = "Physical devices cannot be modified after being initialized";
const char* const kVirtualMessage = "Virtual devices cannot be modified after being initialized";

PhysicalDevice physical(const PhysicalDeviceInfo& info) {
  return {"/physical_device:" + info.type + ":" + std::to_string(info.index), info.type};
}

std::string physical_names(const Runtime& rt) {
  std::string s;
  for (const PhysicalDeviceInfo& p : rt.physical_devices()) s += (s.empty() ? "" : ", ") + physical(p).name;
  return s.empty() ? "(none)" : s;
}

// The runtime's record of `device`; UsageError when there is none such.
const PhysicalDeviceInfo& find_physical(const Runtime& rt, const PhysicalDevice& device) {
  for (const PhysicalDeviceInfo& p : rt.physical_devices())
    if (physical(p) == device) return p;
  throw UsageError("no physical device " + device.name + "; physical devices: " + physical_names(rt));
}

bool is_visible(const Runtime& rt, const PhysicalDeviceInfo& p) {
  if (!rt.config().visible_devices) return true;
  for (const DeviceSpec& s : parse_device_list(*rt.config().visible_devices))
    if (s.type == p.type && s.index == p.index) return true;
  return false;
}

}  // namespace

namespace config {

std::vector<PhysicalDevice> list_physical_devices(const std::string& type) {
  const std::string t = device_type(type);
  std::vector<PhysicalDevice> out;
  for (const PhysicalDeviceInfo& p : runtime().physical_devices())
    if (t.empty() || p.type == t) out.push_back(physical(p));
  return out;
}

std::vector<LogicalDevice> list_logical_devices(const std::string& type) {
  const std::string t = device_type(type);
  std::vector<LogicalDevice> out;
  for (Device* d : runtime().devices()) {
    d->api();  // initialises it, as TensorFlow's context does here
    if (t.empty() || d->type() == t) out.push_back({d->name(), d->type()});
  }
  return out;
}

std::vector<PhysicalDevice> get_visible_devices(const std::string& type) {
  const Runtime& rt = runtime();
  const std::string t = device_type(type);
  std::vector<PhysicalDevice> out;
  for (const PhysicalDeviceInfo& p : rt.physical_devices())
    if ((t.empty() || p.type == t) && is_visible(rt, p)) out.push_back(physical(p));
  return out;
}

void set_visible_devices(const std::vector<PhysicalDevice>& devices, const std::string& type) {
  Runtime& rt = runtime();
  const std::string t = device_type(type);
  for (const PhysicalDevice& d : devices) {
    const PhysicalDeviceInfo& p = find_physical(rt, d);
    if (!t.empty() && p.type != t)
      throw UsageError("set_visible_devices: " + d.name + " is not a " + t + " device");
  }
  // Devices of the type named become exactly `devices`; the others stay.
  std::string list;
  size_t kept = 0;
  for (const PhysicalDeviceInfo& p : rt.physical_devices()) {
    const bool wanted = std::find(devices.begin(), devices.end(), physical(p)) != devices.end();
    if ((t.empty() || p.type == t) ? wanted : is_visible(rt, p)) {
      list += (list.empty() ? "" : ",") + p.name;
      ++kept;
    }
  }
  Config c = rt.config();
  // Nothing changes: not an error, even after the devices were initialised.
  if (c.visible_devices ? *c.visible_devices == list : kept == rt.physical_devices().size()) return;
  if (rt.devices_opened()) throw RuntimeError(kVisibleMessage);
  if (list.empty())
    throw UsageError("set_visible_devices would leave no device visible; physical devices: " + physical_names(rt));
  c.visible_devices = list;
  c.visible_devices_source = "set_visible_devices";
  api_detail::reconfigure(c, kVisibleMessage);
}

void set_logical_device_configuration(const PhysicalDevice& device,
                                      const std::vector<LogicalDeviceConfiguration>& logical_devices) {
  Runtime& rt = runtime();
  const PhysicalDeviceInfo& p = find_physical(rt, device);
  Config c = rt.config();
  if (p.type == "GPU") {
    if (logical_devices.size() != 1)
      throw UsageError("set_logical_device_configuration: axon gives each GPU one logical device (its memory "
                       "limit), got " + std::to_string(logical_devices.size()) + " configurations for " + device.name);
    c.gpu_memory_limit_mb = logical_devices[0].memory_limit;
  } else if (p.type == "CPU") {
    if (logical_devices.empty())
      throw UsageError("set_logical_device_configuration: " + device.name + " needs at least one configuration");
    for (const LogicalDeviceConfiguration& l : logical_devices)
      if (l.memory_limit)
        throw UsageError("set_logical_device_configuration: a CPU device has no memory limit in axon");
    if (p.index != 0)
      throw UsageError("set_logical_device_configuration: the logical CPU devices are configured on "
                       "/physical_device:CPU:0");
    c.cpu_devices = static_cast<int>(logical_devices.size());
  } else {
    throw UsageError("set_logical_device_configuration: axon configures GPU and CPU devices, not " + p.type);
  }
  api_detail::reconfigure(c, kVirtualMessage);
}

void set_soft_device_placement(bool enabled) {
  Config c = runtime().config();
  c.strict_placement = !enabled;
  api_detail::reconfigure(c, kPhysicalMessage);
}

bool get_soft_device_placement() { return !runtime().config().strict_placement; }

namespace experimental {

void set_memory_growth(const PhysicalDevice& device, bool enable) {
  Runtime& rt = runtime();
  if (find_physical(rt, device).type != "GPU")
    throw UsageError("set_memory_growth: " + device.name + " is not a GPU (memory growth is a GPU setting)");
  Config c = rt.config();
  if (c.gpu_memory_growth == enable) return;
  c.gpu_memory_growth = enable;
  api_detail::reconfigure(c, kPhysicalMessage);
}

bool get_memory_growth(const PhysicalDevice& device) {
  Runtime& rt = runtime();
  find_physical(rt, device);
  return rt.config().gpu_memory_growth;
}

}  // namespace experimental
}  // namespace config

namespace debugging {

void set_log_device_placement(bool enabled) {
  Config c = runtime().config();
  c.log_device_placement = enabled;
  api_detail::reconfigure(c, kPhysicalMessage);
}

}  // namespace debugging
}  // namespace axon
