// Internal: finds plugin files, loads them with Boost.DLL (never unloading),
// and validates their tables the way TensorFlow's PluggableDevice does.
#pragma once

#include <axon/config.hpp>
#include <axon/plugin_abi.h>
#include <axon/runtime.hpp>

#include <optional>
#include <string>
#include <vector>

namespace axon {

// One loaded, validated plugin. Lives (and stays loaded) for the process.
class Plugin {
 public:
  std::string path;
  axon_plugin_api api{};  // fields beyond the plugin's struct_size are zero
  PluginInfo info;
};

// What the host gives every plugin; lives for the process.
struct HostContext {
  Config config;
  axon_host_api api{};
};
HostContext* make_host_context(const Config& config);

// The folders searched, in order: config.plugin_dirs (flags, then
// AXON_PLUGIN_PATH), then <dir of libaxon-core>/axon/plugins.
std::vector<std::string> plugin_search_dirs(const Config& config);

// A plugin file that was skipped (not as a duplicate) and that no file of
// the same name replaced: its devices are missing because it failed.
struct UnloadedPlugin {
  std::string name;     // <name> of libaxon-plugin-<name>.so
  std::string path;
  bool started = false;  // its entry point ran (and failed, or gave a table that was refused)
  std::string message;   // the plugin's own message when init failed, else the skip reason
};

struct LoadResult {
  std::vector<Plugin*> plugins;  // in discovery order
  std::vector<SkippedPlugin> skipped;
  std::vector<UnloadedPlugin> unloaded;
};
LoadResult load_plugins(const Config& config, HostContext* host);

// Copies a table the other side filled, treating bytes past its struct_size
// as absent. Returns an error message or nullopt.
std::optional<std::string> validate_plugin_table(const axon_plugin_api& raw, axon_plugin_api& out);
std::optional<std::string> validate_device_table(const axon_device_api& raw, axon_device_api& out);

}  // namespace axon
