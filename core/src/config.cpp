// Config::from_environment and Config::lookup: the AXON_* variables, each
// checked once at start with a message naming the variable and the value.
#include <axon/config.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/log.hpp>
#include <axon/parse.hpp>

#include <cstdlib>
#include <string_view>

namespace axon {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

}  // namespace

Config Config::from_environment() {
  Config c;
  if (const char* v = env("AXON_PLUGIN_PATH")) {
    std::string_view s(v);
    while (!s.empty()) {
      size_t colon = s.find(':');
      std::string_view part = s.substr(0, colon);
      if (!part.empty()) c.plugin_dirs.emplace_back(part);
      if (colon == std::string_view::npos) break;
      s.remove_prefix(colon + 1);
    }
  }
  if (const char* v = env("AXON_VISIBLE_DEVICES")) {
    c.visible_devices = v;
    c.visible_devices_source = "AXON_VISIBLE_DEVICES";
  }
  using parse::boolean;
  using parse::integer;
  if (const char* v = env("AXON_CPU_DEVICE_COUNT"))
    c.cpu_devices = static_cast<int>(integer("AXON_CPU_DEVICE_COUNT", v, 1, limits::kMaxCpuDevices));
  if (const char* v = env("AXON_NUM_THREADS"))
    c.threads = static_cast<int>(integer("AXON_NUM_THREADS", v, 0, limits::kMaxThreads));
  if (const char* v = env("AXON_LOG_DEVICE_PLACEMENT")) c.log_device_placement = boolean("AXON_LOG_DEVICE_PLACEMENT", v);
  if (const char* v = env("AXON_STRICT_PLACEMENT")) c.strict_placement = boolean("AXON_STRICT_PLACEMENT", v);
  if (const char* v = env("AXON_GPU_MEMORY_GROWTH")) c.gpu_memory_growth = boolean("AXON_GPU_MEMORY_GROWTH", v);
  // Up to 2^43 MB (8 EiB): the byte count must fit 64 bits.
  if (const char* v = env("AXON_GPU_MEMORY_LIMIT_MB")) c.gpu_memory_limit_mb = integer("AXON_GPU_MEMORY_LIMIT_MB", v, 1, int64_t{1} << 43);
  if (const char* v = env("AXON_ALLOW_TF32")) c.allow_tf32 = boolean("AXON_ALLOW_TF32", v);
  if (const char* v = env("AXON_DETERMINISTIC")) c.deterministic = boolean("AXON_DETERMINISTIC", v);
  if (const char* v = env("AXON_FUSED_OPS")) c.fused_ops = boolean("AXON_FUSED_OPS", v);
  if (const char* v = env("AXON_CHECK_NUMERICS")) c.check_numerics = boolean("AXON_CHECK_NUMERICS", v);
  // Read by the CPU plugin; checked here with the others so that a typo is not ignored.
  if (const char* v = env("AXON_CPU_ISA")) {
    const std::string_view isa(v);
    if (isa != "base" && isa != "avx2" && isa != "avx512")
      throw UsageError("AXON_CPU_ISA='" + parse::printable(v) + "' is not base, avx2 or avx512");
  }
  if (const char* v = env("AXON_CPU_WAIT")) {
    const std::string_view wait(v);
    if (wait != "active" && wait != "passive")
      throw UsageError("AXON_CPU_WAIT='" + parse::printable(v) + "' is not active or passive");
  }
  if (const char* v = env("AXON_LOG_LEVEL")) {
    try {
      log::parse_level(v);
    } catch (const UsageError& e) {
      throw UsageError(std::string("AXON_LOG_LEVEL: ") + e.what());
    }
    c.log_level = v;
  }
  return c;
}

void Config::validate() const {
  if (cpu_devices < 1 || cpu_devices > limits::kMaxCpuDevices)
    throw UsageError("the number of logical CPU devices (--cpu-devices, AXON_CPU_DEVICE_COUNT) must be from 1 to " +
                     std::to_string(limits::kMaxCpuDevices) + ", got " + std::to_string(cpu_devices));
  if (threads < 0 || threads > limits::kMaxThreads)
    throw UsageError("the number of CPU threads (--threads, AXON_NUM_THREADS) must be from 0 (all cores) to " +
                     std::to_string(limits::kMaxThreads) + ", got " + std::to_string(threads));
  // --threads is the total: every logical device runs at least one thread.
  if (threads > 0 && threads < cpu_devices)
    throw UsageError(std::to_string(threads) + " CPU thread" + (threads == 1 ? "" : "s") +
                     " in all (--threads, AXON_NUM_THREADS) cannot run " + std::to_string(cpu_devices) +
                     " logical CPU devices (--cpu-devices, AXON_CPU_DEVICE_COUNT), each of which needs one; use "
                     "--threads " + std::to_string(cpu_devices) + " or more, or 0 for all cores");
  if (gpu_memory_limit_mb && (*gpu_memory_limit_mb < 1 || *gpu_memory_limit_mb > (int64_t{1} << 43)))
    throw UsageError("the GPU memory limit (--gpu-memory-limit, AXON_GPU_MEMORY_LIMIT_MB) must be from 1 to " +
                     std::to_string(int64_t{1} << 43) + " MB, got " + std::to_string(*gpu_memory_limit_mb));
}

std::optional<std::string> Config::lookup(const std::string& key) const {
  auto flag = [](bool b) { return std::string(b ? "1" : "0"); };
  if (key == "cpu-devices") return std::to_string(cpu_devices);
  if (key == "threads") return std::to_string(threads);
  if (key == "gpu-memory-growth") return flag(gpu_memory_growth);
  if (key == "gpu-memory-limit") {
    if (!gpu_memory_limit_mb) return std::nullopt;
    return std::to_string(*gpu_memory_limit_mb);
  }
  if (key == "allow-tf32") return flag(allow_tf32);
  if (key == "deterministic") return flag(deterministic);
  if (key == "check-numerics") return flag(check_numerics);
  if (key == "log-level") return log_level;
  if (key == "log-device-placement") return flag(log_device_placement);
  if (key == "strict-placement") return flag(strict_placement);
  if (key == "visible-devices") return visible_devices;
  return std::nullopt;
}

}  // namespace axon
