// Loads the plugin file the way axon's apps do: Runtime::init, whose loader
// makes the runtime's checks (file name, permissions, dlopen, the entry
// symbol, the ABI major, init, the plugin table), searching the file's own
// folder alone; then picks the plugin's device to check.
#pragma once

#include <axon/device.hpp>
#include <axon/runtime.hpp>

#include <optional>
#include <string>

namespace axon::plugin_check {

struct LoadSettings {
  std::string file;                        // absolute path of the plugin file
  int device = 0;                          // --device N: the plugin's Nth device
  bool allow_insecure = false;             // --allow-insecure-plugin-path
  std::optional<int64_t> memory_limit_mb;  // open the device with AXON_MEMORY_LIMIT
};

struct Loaded {
  PluginInfo info;
  std::vector<ExcludedDevice> excluded;  // the plugin's own
  Device* device = nullptr;              // nullptr when the plugin offers none
};

// True when the file name is libaxon-plugin-<name>.so, the only files axon loads.
bool plugin_file_name(const std::string& path);

// Loads (once per process). nullopt with *why set to the loader's reason when
// the plugin was refused. Throws UsageError when --device names a device the
// plugin does not have.
std::optional<Loaded> load_plugin(const LoadSettings& s, std::string* why);

}  // namespace axon::plugin_check
