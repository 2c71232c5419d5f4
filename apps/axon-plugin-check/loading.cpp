#include "loading.hpp"

#include <axon/config.hpp>
#include <axon/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace axon::plugin_check {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

}  // namespace

bool plugin_file_name(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  const std::string prefix = "libaxon-plugin-", suffix = ".so";
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<Loaded> load_plugin(const LoadSettings& s, std::string* why) {
  // The user's AXON_* settings (threads, log level) apply; which plugins load
  // and how the device's memory is set up are the checker's.
  Config config = Config::from_environment();
  config.plugin_dirs = {fs::path(s.file).parent_path().string()};
  config.default_plugin_dir = false;
  config.visible_devices.reset();
  config.allow_insecure_plugin_path = s.allow_insecure;
  config.gpu_memory_growth = true;  // never reserve most of a GPU for a few small buffers
  config.gpu_memory_limit_mb = s.memory_limit_mb;
  config.check_numerics = false;
  // The loader's warnings about the folder's other files are no concern of
  // the check, and its verdict on this file is the load check's detail.
  if (std::getenv("AXON_LOG_LEVEL") == nullptr) config.log_level = "error";
  Runtime& rt = Runtime::init(config);

  const PluginInfo* info = nullptr;
  for (const PluginInfo& p : rt.plugins())
    if (same_file(p.path, s.file)) info = &p;
  if (info == nullptr) {
    *why = "the loader did not load it";
    for (const SkippedPlugin& k : rt.skipped_plugins())
      if (same_file(k.path, s.file)) *why = k.reason;
    return std::nullopt;
  }
  Loaded l;
  l.info = *info;
  for (const ExcludedDevice& e : rt.excluded())
    if (e.plugin == info->name) l.excluded.push_back(e);
  std::vector<Device*> mine;
  for (Device* d : rt.devices())
    if (d->plugin_name() == info->name) mine.push_back(d);
  std::sort(mine.begin(), mine.end(), [](const Device* a, const Device* b) { return a->index() < b->index(); });
  if (!mine.empty()) {
    if (s.device < 0 || s.device >= static_cast<int>(mine.size()))
      throw UsageError("--device " + std::to_string(s.device) + ": plugin " + info->name + " has " +
                       std::to_string(mine.size()) + " device(s), numbered from 0");
    l.device = mine[static_cast<size_t>(s.device)];
  }
  return l;
}

}  // namespace axon::plugin_check
