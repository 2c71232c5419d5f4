// Whether a plugin's devices can be tested, for the GPU test drivers and
// benchmarks: usable devices; none, because the driver reports none (a skip,
// exit 77); or devices the driver shows but the plugin cannot use, e.g.
// because a library it needs does not load (a failure, never a skip: a
// missing cuDNN must not read as "no GPU").
#pragma once

#include "plugin_harness.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace axon::test {

enum class Presence { usable, none, unusable };

struct DevicePresence {
  Presence kind = Presence::none;
  std::string message;  // why there is no usable device; empty when usable
};

inline DevicePresence device_presence(const LoadedPlugin& p) {
  DevicePresence d;
  if (p.device_count() > 0) {
    d.kind = Presence::usable;
    return d;
  }
  const char* why = p.api.unavailable_reason ? p.api.unavailable_reason(p.api.plugin_ctx) : nullptr;
  d.message = why && *why ? why : "(no reason given)";
  const int excluded = p.api.excluded_count ? p.api.excluded_count(p.api.plugin_ctx) : 0;
  // The plugin lists every device the driver showed but it cannot use as
  // excluded; with none listed, the driver itself reported no device.
  d.kind = excluded > 0 ? Presence::unusable : Presence::none;
  for (int i = 0; i < excluded; ++i) {
    axon_excluded_device x{};
    x.struct_size = sizeof x;
    axon_error err{};
    if (p.api.get_excluded(p.api.plugin_ctx, i, &x, &err) != AXON_OK) continue;
    d.message += std::string("; excluded: ") + x.name;
    if (d.message.find(x.reason) == std::string::npos) d.message += std::string(" (") + x.reason + ")";
  }
  return d;
}

// For a driver's main(): nullopt when there is a usable device; otherwise
// prints "SKIP: no <what>: <reason>" and gives 77, or
// "FAIL: unusable <what>: <reason>" and gives 1.
inline std::optional<int> exit_without_device(const LoadedPlugin& p, const char* what) {
  const DevicePresence d = device_presence(p);
  if (d.kind == Presence::usable) return std::nullopt;
  if (d.kind == Presence::none) {
    std::printf("SKIP: no %s: %s\n", what, d.message.c_str());
    return 77;
  }
  std::printf("FAIL: unusable %s: %s\n", what, d.message.c_str());
  return 1;
}

}  // namespace axon::test
