#include "device_choice.hpp"

#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/parse.hpp>

namespace axon::train_app {

std::string device_list(const Runtime& rt) {
  std::string s;
  for (const Device* d : rt.devices()) s += (s.empty() ? "" : ", ") + d->name();
  return s.empty() ? "none" : s;
}

// Opens `device` now, so that a plugin failing to start is reported before
// training. `named_by` says how the user named the device ("--device toy:0",
// or "--visible-devices names /device:TOY:0" with ", but "): then a failure is bad input
// (exit 2) with the plugin's message; a device nobody named fails as a
// runtime error (exit 1).
void start_device(Device& device, const std::string& named_by, const char* joiner) {
  try {
    device.api();
  } catch (const RuntimeError& e) {
    if (named_by.empty()) throw;
    // The plugin's own words, without the core's "cannot open DEV (plugin P): ".
    std::string message = e.what();
    const std::string prefix = "cannot open " + device.name() + " (plugin " + device.plugin_name() + "): ";
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    throw UsageError(named_by + joiner + "plugin " + device.plugin_name() + " failed to start: " + message);
  }
}

void start_devices(const Runtime& rt, const std::vector<Device*>& devices) {
  for (Device* d : devices) {
    if (rt.config().visible_devices)
      start_device(*d, rt.config().visible_devices_source + " names " + d->original_name(), ", but ");
    else
      start_device(*d, {});
  }
}

DeviceChoice choose_device(const Runtime& rt, const std::optional<std::string>& requested) {
  DeviceChoice c;
  if (!requested) {
    c.device = &rt.default_device();
    c.reason = "the highest-priority visible device";
    if (c.device->type() != "GPU") c.reason += "; no GPU: " + rt.why_no_device("GPU");
    start_devices(rt, {c.device});
    return c;
  }
  const DeviceSpec spec = parse_device_spec(*requested);  // UsageError for a malformed name
  const std::string flag = "--device " + parse::printable(*requested);
  if (Device* d = rt.find_device(*requested)) {
    start_device(*d, flag);
    c.device = d;
    c.reason = flag;
    return c;
  }
  // A plugin that would have given it failed: its message, not a quiet CPU run.
  if (auto failed = rt.failed_plugin(spec.type)) throw UsageError(flag + ": " + *failed);
  const std::string missing = spec.canonical() + " is not available (" + rt.why_no_device(spec.type) + ")";
  if (rt.config().strict_placement)
    throw UsageError(flag + ": " + missing + "; devices: " + device_list(rt) +
                     " (--strict-placement forbids falling back to the CPU)");
  Device* cpu = rt.cpu_device();
  if (cpu == nullptr)
    throw UsageError(flag + ": " + missing +
                     " and there is no CPU device to fall back to; devices: " + device_list(rt));
  log::warning("axon-train", flag + ": " + missing + "; falling back to " + cpu->name());
  c.device = cpu;
  c.reason = "fallback: " + missing;
  return c;
}

}  // namespace axon::train_app
