// The registry: loads plugins (loader), opens their devices, applies
// visibility filtering with a logical -> physical map, and answers "which
// devices are there". Initialised once per process from a Config.
#pragma once

#include <axon/config.hpp>
#include <axon/device.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon {

// A plugin file that was looked at and not used, and why.
struct SkippedPlugin {
  std::string path;
  std::string reason;
};

// A device that exists but is not offered, and why ("filtered by
// AXON_VISIBLE_DEVICES", "compute capability 3.5 < 6.0", ...).
struct ExcludedDevice {
  std::string name;    // "/device:GPU:1" style where known, else the plugin's name for it
  std::string plugin;
  int physical_id = -1;
  std::string reason;
};

// A device a plugin offers, before visibility filtering (TensorFlow's
// physical device): its name then, "/device:GPU:1".
struct PhysicalDeviceInfo {
  std::string name;
  std::string type;  // "GPU"
  int index = 0;     // N in the name
  std::string plugin;
};

// A loaded plugin and what it said about itself.
struct PluginInfo {
  std::string name, version, device_type, path;
  std::string abi;  // "2.2"; "1.3 (translated)" for an ABI 1 plugin
  int priority = 0;
  int device_count = 0;
  std::string unavailable_reason;  // when device_count == 0
  double load_ms = 0;              // dlopen + init + device_count
};

class Runtime {
 public:
  // Builds the process-wide runtime. Call once, before anything else; a second
  // call throws UsageError ("the runtime is already initialised; device
  // settings are read once at start"). Throws UsageError when
  // visible_devices names a device that does not exist (listing those that do).
  static Runtime& init(const Config& config);
  // The runtime; throws RuntimeError if init() was not called.
  static Runtime& get();
  static bool initialised();

  const Config& config() const;
  // Changes the settings after init (the C++ API's axon::config calls).
  // Placement, logging and numerics settings apply from the next op. Device
  // settings (visible devices, logical CPU devices, threads, GPU memory)
  // count the loaded plugins' devices again and rebuild devices(); once a
  // device has been opened they are a RuntimeError ("device settings cannot
  // be changed after the devices were initialised"). Plugin folders cannot
  // change (UsageError). Call it between ops, not while other threads run
  // them: Device pointers taken before stay valid but are no longer listed.
  void reconfigure(const Config& config);
  // Whether any visible device has been opened (devices open on first use).
  bool devices_opened() const;
  // Visible devices, highest priority first, then by type and index.
  const std::vector<Device*>& devices() const;
  const std::vector<ExcludedDevice>& excluded() const;
  // Every device the plugins offer, visible or not, in discovery order.
  const std::vector<PhysicalDeviceInfo>& physical_devices() const;
  const std::vector<SkippedPlugin>& skipped_plugins() const;
  const std::vector<PluginInfo>& plugins() const;

  // Looks a device up by any accepted spelling; throws UsageError listing
  // the visible devices when there is none such.
  Device& device(const std::string& name) const;
  Device* find_device(const std::string& name) const;  // nullptr if none
  // The highest-priority visible device (GPU before CPU).
  Device& default_device() const;
  // The first visible CPU device (the soft-placement fallback); nullptr if none.
  Device* cpu_device() const;
  int count(const std::string& type) const;  // visible devices of a type
  // Why devices of `type` ("TOY", "gpu") are missing because the plugin
  // that would give them failed: "plugin toy failed to start: <its
  // message>" (its init failed or its table was refused) or "plugin toy was
  // not loaded from PATH: <reason>". A plugin that failed before saying its
  // device type is matched by its file name, libaxon-plugin-<name>.so
  // (case-insensitive; cuda means GPU). nullopt when none such failed.
  std::optional<std::string> failed_plugin(const std::string& type) const;
  // Why no visible device of `type` ("GPU") is there, or not the one asked
  // for: the plugin's reason for offering none ("cuda: CUDA driver not found
  // (...)"), the devices it excluded and why, and how many there are ("only
  // 1 visible CPU device: /device:CPU:0"), or "no plugin provides TPU
  // devices". --visible-devices naming a device that does not exist says
  // the same of the devices before filtering.
  std::string why_no_device(const std::string& type) const;

  ~Runtime();

 private:
  Runtime();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace axon
