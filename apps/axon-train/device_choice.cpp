#include "device_choice.hpp"

#include <axon/error.hpp>
#include <axon/log.hpp>

namespace axon::train_app {

std::string device_list(const Runtime& rt) {
  std::string s;
  for (const Device* d : rt.devices()) s += (s.empty() ? "" : ", ") + d->name();
  return s.empty() ? "none" : s;
}

std::string why_no_device(const Runtime& rt, const std::string& type) {
  std::string why;
  for (const PluginInfo& p : rt.plugins())
    if (p.device_type == type && p.device_count == 0 && !p.unavailable_reason.empty())
      why += (why.empty() ? "" : "; ") + p.name + ": " + p.unavailable_reason;
  for (const ExcludedDevice& e : rt.excluded())
    if (e.name.find(type) != std::string::npos || e.plugin == "cuda")
      why += (why.empty() ? "" : "; ") + e.name + " excluded: " + e.reason;
  if (why.empty()) {
    bool has_plugin = false;
    for (const PluginInfo& p : rt.plugins()) has_plugin |= p.device_type == type;
    why = has_plugin ? "no visible " + type + " device" : "no plugin provides " + type + " devices";
  }
  return why;
}

DeviceChoice choose_device(const Runtime& rt, const std::optional<std::string>& requested) {
  DeviceChoice c;
  if (!requested) {
    c.device = &rt.default_device();
    c.reason = "the highest-priority visible device";
    if (c.device->type() != "GPU") c.reason += "; no GPU: " + why_no_device(rt, "GPU");
    return c;
  }
  const DeviceSpec spec = parse_device_spec(*requested);  // UsageError for a malformed name
  if (Device* d = rt.find_device(*requested)) {
    c.device = d;
    c.reason = "--device " + *requested;
    return c;
  }
  const std::string missing = spec.canonical() + " is not available (" + why_no_device(rt, spec.type) + ")";
  if (rt.config().strict_placement)
    throw UsageError("--device " + *requested + ": " + missing + "; devices: " + device_list(rt) +
                     " (--strict-placement forbids falling back to the CPU)");
  Device* cpu = rt.cpu_device();
  if (cpu == nullptr)
    throw UsageError("--device " + *requested + ": " + missing + " and there is no CPU device to fall back to; devices: " +
                     device_list(rt));
  log::warning("axon-train", "--device " + *requested + ": " + missing + "; falling back to " + cpu->name());
  c.device = cpu;
  c.reason = "fallback: " + missing;
  return c;
}

}  // namespace axon::train_app
