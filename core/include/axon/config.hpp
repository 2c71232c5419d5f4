// One configuration object, read once at start from the environment and then
// from command-line flags (flags win). Everything device-related lives here so
// axon-devices and axon-train behave the same. See docs/cli.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace axon {

struct Config {
  std::vector<std::string> plugin_dirs;     // --plugin-dir (repeatable), AXON_PLUGIN_PATH (colon-separated)
  std::optional<std::string> visible_devices; // --visible-devices, AXON_VISIBLE_DEVICES: "cpu:0,gpu:1"
  int cpu_devices = 1;                      // --cpu-devices, AXON_CPU_DEVICE_COUNT
  int threads = 0;                          // --threads, AXON_NUM_THREADS; 0 = all cores
  bool log_device_placement = false;        // --log-device-placement, AXON_LOG_DEVICE_PLACEMENT=1
  bool strict_placement = false;            // --strict-placement, AXON_STRICT_PLACEMENT=1
  bool gpu_memory_growth = false;           // --gpu-memory-growth, AXON_GPU_MEMORY_GROWTH=1
  std::optional<int64_t> gpu_memory_limit_mb; // --gpu-memory-limit MB, AXON_GPU_MEMORY_LIMIT_MB
  bool allow_tf32 = false;                  // --allow-tf32, AXON_ALLOW_TF32=1
  bool deterministic = false;               // --deterministic, AXON_DETERMINISTIC=1
  // --check-numerics (TensorFlow's enable_check_numerics): dispatch checks
  // every float output of every op and fails at the first NaN or Inf.
  bool check_numerics = false;
  std::string log_level = "warning";        // --log-level, AXON_LOG_LEVEL
  bool fused_ops = true;                    // AXON_FUSED_OPS (read by the training layers)
  // --allow-insecure-plugin-path: load plugins from world-writable folders or
  // files too (with a warning); no variable, so the choice stays explicit.
  bool allow_insecure_plugin_path = false;

  // Where visible_devices came from, for messages ("filtered by
  // AXON_VISIBLE_DEVICES" / "filtered by --visible-devices").
  std::string visible_devices_source = "AXON_VISIBLE_DEVICES";
  // Also search <dir of libaxon-core>/axon/plugins (install layout and build
  // tree). Tests that want only their own plugin folders turn it off.
  bool default_plugin_dir = true;

  // Reads the AXON_* variables above; throws UsageError naming the variable
  // and the value when one is malformed or beyond its limit (axon/limits.hpp).
  static Config from_environment();

  // UsageError when the settings contradict each other or pass a limit
  // (more logical CPU devices than threads, ...). Runtime::init checks it.
  void validate() const;

  // The value of a key as plugins see it through axon_host_api::get_config
  // ("cpu-devices", "threads", "gpu-memory-growth", "gpu-memory-limit",
  // "allow-tf32", "deterministic", ...); nullopt when unset.
  std::optional<std::string> lookup(const std::string& key) const;
};

}  // namespace axon
