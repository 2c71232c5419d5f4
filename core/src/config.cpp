// Config::from_environment and Config::lookup: the AXON_* variables, each
// checked once at start with a message naming the variable and the value.
#include <axon/config.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>

#include <cerrno>
#include <cstdlib>
#include <string_view>

namespace axon {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

int64_t parse_int(const char* name, const char* text, int64_t min) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min)
    throw UsageError(std::string(name) + "='" + text + "' is not an integer >= " + std::to_string(min));
  return v;
}

bool parse_bool(const char* name, const char* text) {
  std::string t;
  for (const char* p = text; *p; ++p) t += static_cast<char>(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  throw UsageError(std::string(name) + "='" + text + "' is not a boolean (use 1 or 0)");
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
  if (const char* v = env("AXON_CPU_DEVICE_COUNT")) c.cpu_devices = static_cast<int>(parse_int("AXON_CPU_DEVICE_COUNT", v, 1));
  if (const char* v = env("AXON_NUM_THREADS")) c.threads = static_cast<int>(parse_int("AXON_NUM_THREADS", v, 0));
  if (const char* v = env("AXON_LOG_DEVICE_PLACEMENT")) c.log_device_placement = parse_bool("AXON_LOG_DEVICE_PLACEMENT", v);
  if (const char* v = env("AXON_STRICT_PLACEMENT")) c.strict_placement = parse_bool("AXON_STRICT_PLACEMENT", v);
  if (const char* v = env("AXON_GPU_MEMORY_GROWTH")) c.gpu_memory_growth = parse_bool("AXON_GPU_MEMORY_GROWTH", v);
  if (const char* v = env("AXON_GPU_MEMORY_LIMIT_MB")) c.gpu_memory_limit_mb = parse_int("AXON_GPU_MEMORY_LIMIT_MB", v, 1);
  if (const char* v = env("AXON_ALLOW_TF32")) c.allow_tf32 = parse_bool("AXON_ALLOW_TF32", v);
  if (const char* v = env("AXON_DETERMINISTIC")) c.deterministic = parse_bool("AXON_DETERMINISTIC", v);
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
  if (key == "log-level") return log_level;
  if (key == "log-device-placement") return flag(log_device_placement);
  if (key == "strict-placement") return flag(strict_placement);
  if (key == "visible-devices") return visible_devices;
  return std::nullopt;
}

}  // namespace axon
