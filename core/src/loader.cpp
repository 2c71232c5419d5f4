// The plugin loader. Search order and validation rules: docs/architecture.md.
#include "loader.hpp"

#include "abi1_shim.hpp"

#include <axon/log.hpp>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>

namespace fs = std::filesystem;

namespace axon {
namespace {

constexpr const char* kTag = "loader";

// ---------------------------------------------------------------- host API

void host_log(void*, axon_log_level level, const char* plugin_name, const char* message) {
  log::Level l = log::Level::info;
  switch (level) {
    case AXON_LOG_DEBUG: l = log::Level::debug; break;
    case AXON_LOG_INFO: l = log::Level::info; break;
    case AXON_LOG_WARNING: l = log::Level::warning; break;
    case AXON_LOG_ERROR: l = log::Level::error; break;
  }
  log::write(l, plugin_name ? plugin_name : "plugin", message ? message : "");
}

const char* host_get_config(void* ctx, const char* key) {
  if (ctx == nullptr || key == nullptr) return nullptr;
  auto* host = static_cast<HostContext*>(ctx);
  std::optional<std::string> v = host->config.lookup(key);
  if (!v) return nullptr;
  // The ABI promises the string lives for the process: intern it.
  static std::mutex mu;
  static std::deque<std::string> store;
  std::lock_guard<std::mutex> lock(mu);
  for (const std::string& s : store)
    if (s == *v) return s.c_str();
  store.push_back(*v);
  return store.back().c_str();
}

// ---------------------------------------------------------------- tables

std::string missing_field(const char* field, const char* table) {
  return std::string("'") + field + "' field in " + table + " must be set";
}

std::string too_small(const char* table, size_t have, size_t need) {
  return std::string(table) + ".struct_size is " + std::to_string(have) + " bytes, less than the " +
         std::to_string(need) + " bytes of its required fields";
}

// Copies `raw` into `out`, keeping only the first struct_size bytes.
template <class T>
void copy_prefix(const T& raw, T& out) {
  std::memset(&out, 0, sizeof out);
  size_t n = std::min(raw.struct_size, sizeof(T));
  std::memcpy(&out, &raw, n);
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Writable by anyone (following links: what would be loaded).
bool world_writable(const fs::path& p) {
  struct stat st{};
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IWOTH) != 0;
}

bool is_plugin_file(const fs::path& p) {
  std::string name = p.filename().string();
  const std::string prefix = "libaxon-plugin-", suffix = ".so";
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Libraries stay loaded for the process (CUDA runtimes do not survive
// dlclose, and function pointers handed out must stay valid): never
// destroyed, and held here so that they stay reachable (a leak checker sees
// them kept, not lost).
std::vector<boost::dll::shared_library*>& kept_libraries() {
  static auto* kept = new std::vector<boost::dll::shared_library*>();
  return *kept;
}

std::vector<Plugin*>& kept_plugins() {
  static auto* kept = new std::vector<Plugin*>();
  return *kept;
}

// What load_one says about a file it could not use.
struct Failure {
  std::string reason;   // for the skip warning
  bool started = false;  // the entry point ran
  std::string message;  // the plugin's own message when its init failed
};

// Loads and initialises one file; returns the plugin or fills `failure`.
Plugin* load_one(const fs::path& path, HostContext* host, Failure& failure) {
  std::string& reason = failure.reason;
  auto t0 = std::chrono::steady_clock::now();
  auto* lib = new boost::dll::shared_library();
  std::error_code ec;
  dlerror();  // clear a stale message so the one we read is ours
  lib->load(path, ec, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (ec || !lib->is_loaded()) {
    const char* msg = dlerror();
    reason = std::string("cannot load: ") + (msg ? msg : ec.message());
    delete lib;  // nothing loaded, nothing to keep
    return nullptr;
  }
  kept_libraries().push_back(lib);
  // ABI 2's entry point returns the plugin's own table; ABI 1's fills one of
  // the host's, through the translation layer (abi1_shim.hpp).
  const bool abi2 = lib->has(AXON_PLUGIN_ENTRY_SYMBOL);
  if (!abi2 && !lib->has(abi1::kEntrySymbol)) {
    reason = "no entry symbol '" AXON_PLUGIN_ENTRY_SYMBOL "' (not an axon plugin, or not exported)";
    return nullptr;
  }
  const axon_plugin_api* table = nullptr;
  uint32_t abi1_minor = 0;
  axon_error err{};
  err.struct_size = sizeof err;
  axon_status st = AXON_OK;
  if (abi2) {
    st = lib->get<axon_status(const axon_host_api*, const axon_plugin_api**, axon_error*)>(AXON_PLUGIN_ENTRY_SYMBOL)(
        &host->api, &table, &err);
  } else {
    auto* init = &lib->get<axon_status(const axon_host_api*, void*, axon_error*)>(abi1::kEntrySymbol);
    st = abi1::load(init, &host->api, &table, &abi1_minor, &err);
  }
  const char* entry = abi2 ? AXON_PLUGIN_ENTRY_SYMBOL : abi1::kEntrySymbol;
  failure.started = true;
  if (st != AXON_OK) {
    err.message[sizeof err.message - 1] = '\0';
    failure.message = err.message[0] ? err.message : "no message";
    reason = std::string(entry) + " failed (" + axon_status_name(st) + "): " + failure.message;
    return nullptr;
  }
  if (table == nullptr) {
    reason = std::string(entry) + " returned AXON_OK and no table";
    return nullptr;
  }
  auto plugin = std::make_unique<Plugin>();
  if (auto bad = validate_plugin_table(*table, plugin->api)) {
    reason = *bad;
    return nullptr;
  }
  plugin->path = path.string();
  PluginInfo& info = plugin->info;
  info.name = plugin->api.name;
  info.version = plugin->api.version ? plugin->api.version : "";
  info.abi = abi2 ? std::to_string(table->abi_major) + "." + std::to_string(table->abi_minor)
                  : "1." + std::to_string(abi1_minor) + " (translated)";
  info.device_type = plugin->api.device_type;
  info.path = plugin->path;
  info.priority = plugin->api.priority;
  int32_t n = plugin->api.device_count(plugin->api.plugin_ctx);
  info.device_count = n < 0 ? 0 : n;
  if (info.device_count == 0 && plugin->api.unavailable_reason) {
    const char* r = plugin->api.unavailable_reason(plugin->api.plugin_ctx);
    if (r) info.unavailable_reason = r;
  }
  info.load_ms = ms_since(t0);
  // Kept for the process like its library (a duplicate too: its code is loaded).
  kept_plugins().push_back(plugin.get());
  return plugin.release();
}

}  // namespace

HostContext* make_host_context(const Config& config) {
  // Plugins keep the host API for the process: never freed, always reachable.
  static auto* kept = new std::vector<HostContext*>();
  auto* h = new HostContext{config, {}};
  kept->push_back(h);
  h->api.struct_size = sizeof h->api;
  h->api.abi_major = AXON_ABI_MAJOR;
  h->api.abi_minor = AXON_ABI_MINOR;
  h->api.host_ctx = h;
  h->api.log = host_log;
  h->api.get_config = host_get_config;
  return h;
}

std::optional<std::string> validate_plugin_table(const axon_plugin_api& raw, axon_plugin_api& out) {
  const char* t = "axon_plugin_api";
  if (raw.struct_size < AXON_STRUCT_SIZE(axon_plugin_api, abi_minor))
    return too_small(t, raw.struct_size, AXON_STRUCT_SIZE(axon_plugin_api, open_device));
  if (raw.abi_major != AXON_ABI_MAJOR)
    return "built for ABI major " + std::to_string(raw.abi_major) + ", this axon has " + std::to_string(AXON_ABI_MAJOR);
  if (raw.struct_size < AXON_STRUCT_SIZE(axon_plugin_api, open_device))
    return too_small(t, raw.struct_size, AXON_STRUCT_SIZE(axon_plugin_api, open_device));
  copy_prefix(raw, out);
  if (out.name == nullptr || *out.name == '\0') return missing_field("name", t);
  if (out.device_type == nullptr || *out.device_type == '\0') return missing_field("device_type", t);
  if (out.device_count == nullptr) return missing_field("device_count", t);
  if (out.get_device_props == nullptr) return missing_field("get_device_props", t);
  if (out.open_device == nullptr) return missing_field("open_device", t);
  // Optional pairs: excluded_count without get_excluded is useless.
  if ((out.excluded_count == nullptr) != (out.get_excluded == nullptr)) {
    out.excluded_count = nullptr;
    out.get_excluded = nullptr;
  }
  return std::nullopt;
}

std::optional<std::string> validate_device_table(const axon_device_api& raw, axon_device_api& out) {
  const char* t = "axon_device_api";
  if (raw.struct_size < AXON_STRUCT_SIZE(axon_device_api, list_ops))
    return too_small(t, raw.struct_size, AXON_STRUCT_SIZE(axon_device_api, list_ops));
  copy_prefix(raw, out);
  if (out.allocate == nullptr) return missing_field("allocate", t);
  if (out.deallocate == nullptr) return missing_field("deallocate", t);
  if (out.copy_host_to_device == nullptr) return missing_field("copy_host_to_device", t);
  if (out.copy_device_to_host == nullptr) return missing_field("copy_device_to_host", t);
  if (out.copy_device_to_device == nullptr) return missing_field("copy_device_to_device", t);
  if (out.synchronize == nullptr) return missing_field("synchronize", t);
  if (out.get_kernel == nullptr) return missing_field("get_kernel", t);
  if (out.list_ops == nullptr) return missing_field("list_ops", t);
  return std::nullopt;
}

std::vector<std::string> plugin_search_dirs(const Config& config) {
  std::vector<std::string> dirs = config.plugin_dirs;
  if (config.default_plugin_dir) {
    // dladdr on a function of this library: <prefix>/lib/libaxon-core.so ->
    // <prefix>/lib/axon/plugins, in the install tree and the build tree alike.
    std::error_code ec;
    fs::path self = boost::dll::symbol_location(plugin_search_dirs, ec);
    if (!ec) dirs.push_back((self.parent_path() / "axon" / "plugins").string());
    // An app installed apart from libaxon-core (a system-wide library, an
    // app in its own prefix) also looks next to itself: <exe>/../lib/axon/plugins.
    fs::path exe = boost::dll::program_location(ec);
    if (!ec) dirs.push_back((exe.parent_path() / ".." / "lib" / "axon" / "plugins").string());
  }
  // The same folder named twice (AXON_PLUGIN_PATH pointing at the install
  // layout, a symlink) is searched once, quietly: its plugins are no duplicates.
  std::vector<std::string> unique;
  std::vector<fs::path> canonical;
  for (const std::string& d : dirs) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(d, ec);
    if (ec) c = fs::path(d).lexically_normal();
    if (std::find(canonical.begin(), canonical.end(), c) != canonical.end()) continue;
    canonical.push_back(c);
    unique.push_back(c.string());
  }
  return unique;
}

LoadResult load_plugins(const Config& config, HostContext* host) {
  LoadResult result;
  std::map<std::string, std::string> loaded_files;  // file name -> the path that loaded
  std::map<std::string, std::string> seen_names;    // plugin name -> path
  // Skipped files that could not load: a file of the same name further on
  // still loads (a broken copy must not shadow the real plugin), and the
  // warning then names both.
  std::vector<size_t> failed;  // indices into result.skipped
  for (const std::string& dir : plugin_search_dirs(config)) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      log::debug(kTag, "plugin folder " + dir + " does not exist; skipped");
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (is_plugin_file(entry.path())) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    log::debug(kTag, "searching " + dir + ": " + std::to_string(files.size()) + " plugin file(s)");
    // Anyone may drop a file into a world-writable folder: its plugins would
    // run as this user. Loaded only when asked for, and said each time.
    const bool insecure_dir = !files.empty() && world_writable(dir);
    if (insecure_dir && config.allow_insecure_plugin_path)
      log::warning(kTag, "loading plugins from the world-writable folder " + dir + " (--allow-insecure-plugin-path)");
    for (const fs::path& path : files) {
      const std::string file = path.filename().string();
      Failure failure;
      std::string& reason = failure.reason;
      bool load_failed = false, duplicate = false;
      if (auto it = loaded_files.find(file); it != loaded_files.end()) {
        reason = "duplicate of " + it->second;
        duplicate = true;
      } else if ((insecure_dir || world_writable(path)) && !config.allow_insecure_plugin_path) {
        reason = std::string(insecure_dir ? "its folder is" : "it is") +
                 " world-writable, so anyone could have put it there (--allow-insecure-plugin-path loads it)";
      } else {
        if (!insecure_dir && world_writable(path))
          log::warning(kTag, "loading the world-writable plugin file " + path.string() + " (--allow-insecure-plugin-path)");
        if (Plugin* p = load_one(path, host, failure)) {
          if (auto dup = seen_names.find(p->info.name); dup != seen_names.end()) {
            reason = "duplicate of " + dup->second + " (both are plugin '" + p->info.name + "')";
            duplicate = true;
          } else {
            seen_names.emplace(p->info.name, p->path);
            loaded_files.emplace(file, p->path);
            char ms[32];
            std::snprintf(ms, sizeof ms, "%.2f ms", p->info.load_ms);
            log::info(kTag, "loaded " + p->path + " (" + p->info.name + " " + p->info.version + ", ABI " +
                                p->info.abi + ", " +
                                std::to_string(p->info.device_count) + " device(s), " + ms + ")");
            result.plugins.push_back(p);
            continue;
          }
        } else {
          load_failed = true;
        }
      }
      if (load_failed) failed.push_back(result.skipped.size());
      result.skipped.push_back({path.string(), reason});
      if (!duplicate) {
        // libaxon-plugin-<name>.so: the name says the device type when the plugin could not.
        const size_t prefix = std::strlen("libaxon-plugin-"), suffix = std::strlen(".so");
        result.unloaded.push_back({file.substr(prefix, file.size() - prefix - suffix), path.string(), failure.started,
                                   failure.message.empty() ? reason : failure.message});
      }
    }
  }
  // A broken copy that a good file of the same name replaced took nothing away.
  std::erase_if(result.unloaded, [&](const UnloadedPlugin& u) {
    return loaded_files.count(fs::path(u.path).filename().string()) != 0;
  });
  // One warning per skipped file, once it is known what loaded instead.
  for (size_t i = 0; i < result.skipped.size(); ++i) {
    const SkippedPlugin& s = result.skipped[i];
    std::string line = "skipping plugin " + s.path + ": " + s.reason;
    const auto it = loaded_files.find(fs::path(s.path).filename().string());
    if (it != loaded_files.end() && std::find(failed.begin(), failed.end(), i) != failed.end())
      line += "; loaded " + it->second + " of the same name instead";
    log::warning(kTag, line);
  }
  return result;
}

}  // namespace axon
