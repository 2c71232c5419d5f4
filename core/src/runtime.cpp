// The registry: plugins -> candidate devices -> visibility filter (logical ->
// physical map) -> the visible devices in placement order.
#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/runtime.hpp>

#include "loader.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>

namespace axon {
namespace {

std::atomic<Runtime*> g_runtime{nullptr};
std::mutex g_init_mutex;

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string bounded(const char* s, size_t cap) { return std::string(s, strnlen(s, cap)); }

// A device a plugin offers, before visibility filtering.
struct Candidate {
  Plugin* plugin;
  axon_device_props props;
  std::string type;
  int index;  // pre-filter, per type
  std::string name() const { return "/device:" + type + ":" + std::to_string(index); }
};

std::string join_names(const std::vector<Candidate>& cs) {
  std::string s;
  for (const auto& c : cs) { if (!s.empty()) s += ", "; s += c.name(); }
  return s.empty() ? "(none)" : s;
}

// The device type a plugin file's name stands for: "toy" -> TOY, "cuda" -> GPU.
std::string type_of_plugin_name(const std::string& name) {
  try {
    return parse_device_spec(name).type;
  } catch (const UsageError&) {
    return upper(name);
  }
}

std::optional<std::string> failure_for_type(const std::vector<UnloadedPlugin>& unloaded, const std::string& type) {
  const std::string want = type_of_plugin_name(type);
  for (const UnloadedPlugin& u : unloaded) {
    if (type_of_plugin_name(u.name) != want) continue;
    if (u.started) return "plugin " + u.name + " failed to start: " + u.message;
    return "plugin " + u.name + " was not loaded from " + u.path + ": " + u.message;
  }
  return std::nullopt;
}

// Runtime::why_no_device over the devices `present` (visible, or before
// filtering) of `type`; `adjective` is "visible " or "".
std::string why_no_device_of(const std::string& type, const std::vector<PluginInfo>& plugins,
                             const std::vector<ExcludedDevice>& excluded, const std::vector<std::string>& present,
                             const std::string& adjective) {
  std::string why;
  auto add = [&](const std::string& s) { (why += why.empty() ? "" : "; ") += s; };
  bool has_plugin = false;
  for (const PluginInfo& p : plugins) {
    if (p.device_type != type) continue;
    has_plugin = true;
    if (p.device_count == 0 && !p.unavailable_reason.empty()) add(p.name + ": " + p.unavailable_reason);
    for (const ExcludedDevice& e : excluded)
      if (e.plugin == p.name) add(e.name + " excluded: " + e.reason);
  }
  if (!present.empty()) {
    std::string names;
    for (const std::string& n : present) (names += names.empty() ? "" : ", ") += n;
    add("only " + std::to_string(present.size()) + " " + adjective + type + " device" +
        (present.size() == 1 ? "" : "s") + ": " + names);
  } else if (why.empty()) {
    add(has_plugin ? "no " + adjective + type + " device" : "no plugin provides " + type + " devices");
  }
  return why;
}

axon_device_config device_config(const Config& c, int logical_index) {
  axon_device_config d{};
  d.struct_size = sizeof d;
  d.logical_index = logical_index;
  // 0: the plugin divides the configured total (get_config "threads") among
  // its devices; passing the total here would give every device all of it.
  d.threads = 0;
  if (c.gpu_memory_limit_mb) {
    d.memory_mode = AXON_MEMORY_LIMIT;
    d.memory_limit_bytes = static_cast<uint64_t>(*c.gpu_memory_limit_mb) * 1024 * 1024;
  } else {
    d.memory_mode = c.gpu_memory_growth ? AXON_MEMORY_GROWTH : AXON_MEMORY_RESERVE;
  }
  return d;
}

}  // namespace

// What the plugins offer under one configuration: the devices, before and
// after visibility filtering. Rebuilt by Runtime::reconfigure.
struct DeviceSet {
  std::vector<PluginInfo> plugins;
  std::vector<ExcludedDevice> excluded;
  std::vector<PhysicalDeviceInfo> physical;
  std::vector<std::unique_ptr<Device>> owned;
  std::vector<Device*> devices;
  Device* cpu = nullptr;
};

struct Runtime::Impl {
  Config config;
  HostContext* host = nullptr;
  std::vector<Plugin*> loaded;  // every plugin object, kept (like the runtime) for the process
  std::vector<SkippedPlugin> skipped;
  std::vector<UnloadedPlugin> unloaded;
  DeviceSet set;
  // The sets a reconfigure replaced: nothing in them was opened, but a caller
  // may still hold a Device* of theirs, so they live as long as the runtime.
  std::vector<DeviceSet> retired;

  void build();
  // The devices of the loaded plugins under `config` (the host context's
  // configuration is what plugins read). `recount`: ask each plugin for its
  // device count again (a reconfigure; the loader counted them at load).
  DeviceSet enumerate(const Config& config, bool recount) const;
};

void Runtime::Impl::build() {
  host = make_host_context(config);
  LoadResult result = load_plugins(config, host);
  loaded = result.plugins;
  skipped = result.skipped;
  unloaded = result.unloaded;
  set = enumerate(config, false);
}

DeviceSet Runtime::Impl::enumerate(const Config& config, bool recount) const {
  DeviceSet out;
  std::vector<PluginInfo>& plugins = out.plugins;
  std::vector<ExcludedDevice>& excluded = out.excluded;
  std::vector<Candidate> candidates;
  std::map<std::string, int> next_index;
  for (Plugin* p : loaded) {
    PluginInfo info = p->info;
    const axon_plugin_api& api = p->api;
    if (recount) {
      int32_t n = api.device_count(api.plugin_ctx);
      info.device_count = n < 0 ? 0 : n;
      info.unavailable_reason.clear();
      if (info.device_count == 0 && api.unavailable_reason)
        if (const char* r = api.unavailable_reason(api.plugin_ctx)) info.unavailable_reason = r;
    }
    plugins.push_back(info);
    std::string type = upper(api.device_type);
    for (int id = 0; id < info.device_count; ++id) {
      axon_device_props raw{};
      raw.struct_size = sizeof raw;
      axon_error err{};
      err.struct_size = sizeof err;
      if (api.get_device_props(api.plugin_ctx, id, &raw, &err) != AXON_OK) {
        excluded.push_back({p->info.name + " device " + std::to_string(id), p->info.name, id,
                            "get_device_props failed: " + bounded(err.message, sizeof err.message)});
        continue;
      }
      axon_device_props props{};
      std::memcpy(&props, &raw, std::min(raw.struct_size, sizeof raw));
      props.struct_size = sizeof props;
      props.physical_id = id;  // the id we asked for is the one we will open
      props.name[sizeof props.name - 1] = '\0';
      props.pci_bus_id[sizeof props.pci_bus_id - 1] = '\0';
      props.uuid[sizeof props.uuid - 1] = '\0';
      props.description[sizeof props.description - 1] = '\0';
      candidates.push_back({p, props, type, next_index[type]++});
    }
    if (api.excluded_count) {
      int32_t n = api.excluded_count(api.plugin_ctx);
      for (int32_t i = 0; i < n; ++i) {
        axon_excluded_device e{};
        e.struct_size = sizeof e;
        axon_error err{};
        if (api.get_excluded(api.plugin_ctx, i, &e, &err) != AXON_OK) continue;
        excluded.push_back({bounded(e.name, sizeof e.name), p->info.name, e.physical_id, bounded(e.reason, sizeof e.reason)});
      }
    }
  }

  // Which candidates are visible, and under which logical index.
  std::vector<std::pair<const Candidate*, int>> visible;
  if (config.visible_devices) {
    const std::string& src = config.visible_devices_source;
    std::vector<bool> chosen(candidates.size(), false);
    std::map<std::string, int> logical;
    std::vector<DeviceSpec> specs;
    try {
      specs = parse_device_list(*config.visible_devices);
    } catch (const UsageError& e) {
      throw UsageError(src + ": " + e.what());
    }
    for (const DeviceSpec& spec : specs) {
      auto it = std::find_if(candidates.begin(), candidates.end(),
                             [&](const Candidate& c) { return c.type == spec.type && c.index == spec.index; });
      if (it == candidates.end()) {
        if (auto failed = failure_for_type(unloaded, spec.type))
          throw UsageError(src + " names " + spec.canonical() + ", but " + *failed);
        std::vector<std::string> of_type;
        for (const Candidate& c : candidates)
          if (c.type == spec.type) of_type.push_back(c.name());
        throw UsageError(src + " names " + spec.canonical() + ", which does not exist (" +
                         why_no_device_of(spec.type, plugins, excluded, of_type, "") +
                         "); devices: " + join_names(candidates));
      }
      size_t k = static_cast<size_t>(it - candidates.begin());
      if (chosen[k]) throw UsageError(src + " names " + spec.canonical() + " twice");
      chosen[k] = true;
      visible.emplace_back(&*it, logical[it->type]++);
    }
    if (specs.empty()) throw UsageError(src + " is set but names no device; devices: " + join_names(candidates));
    for (size_t k = 0; k < candidates.size(); ++k)
      if (!chosen[k])
        excluded.push_back({candidates[k].name(), candidates[k].plugin->info.name, candidates[k].props.physical_id,
                            "filtered by " + src});
  } else {
    for (const Candidate& c : candidates) visible.emplace_back(&c, c.index);
  }

  for (const Candidate& c : candidates) out.physical.push_back({c.name(), c.type, c.index, c.plugin->info.name});
  std::vector<Device*>& devices = out.devices;
  for (auto& [c, index] : visible) {
    out.owned.push_back(std::make_unique<Device>(c->plugin, &c->plugin->api, c->props, c->type, index, c->index,
                                                 device_config(config, index)));
    devices.push_back(out.owned.back().get());
  }
  std::stable_sort(devices.begin(), devices.end(), [](const Device* a, const Device* b) {
    if (a->priority() != b->priority()) return a->priority() > b->priority();
    if (a->type() != b->type()) return a->type() < b->type();
    return a->index() < b->index();
  });
  for (Device* d : devices)
    if (d->type() == "CPU") {
      out.cpu = d;
      break;
    }
  if (devices.empty()) log::warning("runtime", "no devices are available (see axon-devices for why)");
  return out;
}

Runtime::Runtime() : impl_(std::make_unique<Impl>()) {}
// Never runs: the runtime lives until the process ends (see init()).
Runtime::~Runtime() = default;

Runtime& Runtime::init(const Config& config) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_runtime.load() != nullptr)
    throw UsageError("the runtime is already initialised; device settings are read once at start");
  config.validate();
  log::set_level(log::parse_level(config.log_level));
  // Deliberately leaked once built: devices must not be closed during static
  // destruction, after their plugins' own statics are gone. A build that
  // fails (a bad visible-devices list) has opened nothing and is freed.
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->impl_->config = config;
  rt->impl_->build();
  g_runtime.store(rt.get(), std::memory_order_release);
  return *rt.release();
}

Runtime& Runtime::get() {
  Runtime* rt = g_runtime.load(std::memory_order_acquire);
  if (rt == nullptr) throw RuntimeError("axon::Runtime::init() has not been called");
  return *rt;
}

bool Runtime::initialised() { return g_runtime.load(std::memory_order_acquire) != nullptr; }

namespace {

// The settings a plugin or a Device reads when it is counted or opened; the
// others (placement, logging, numerics checks) are read at every op.
bool same_device_settings(const Config& a, const Config& b) {
  return a.visible_devices == b.visible_devices && a.cpu_devices == b.cpu_devices && a.threads == b.threads &&
         a.gpu_memory_growth == b.gpu_memory_growth && a.gpu_memory_limit_mb == b.gpu_memory_limit_mb &&
         a.allow_tf32 == b.allow_tf32 && a.deterministic == b.deterministic;
}

}  // namespace

bool Runtime::devices_opened() const {
  for (const auto& d : impl_->set.owned)
    if (d->is_open()) return true;
  return false;
}

void Runtime::reconfigure(const Config& config) {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  Impl& im = *impl_;
  if (config.plugin_dirs != im.config.plugin_dirs || config.default_plugin_dir != im.config.default_plugin_dir ||
      config.allow_insecure_plugin_path != im.config.allow_insecure_plugin_path)
    throw UsageError("plugin folders are searched once, when the runtime starts");
  config.validate();
  if (!same_device_settings(config, im.config)) {
    for (const auto& d : im.set.owned)
      if (d->is_open())
        throw RuntimeError("device settings cannot be changed after the devices were initialised (" + d->name() +
                           " is in use)");
    const Config before = im.host->config;
    im.host->config = config;  // what the plugins count their devices by (cpu-devices)
    DeviceSet next;
    try {
      next = im.enumerate(config, true);
    } catch (...) {
      im.host->config = before;
      throw;
    }
    im.retired.push_back(std::move(im.set));
    im.set = std::move(next);
  }
  log::set_level(log::parse_level(config.log_level));
  im.config = config;
}

const Config& Runtime::config() const { return impl_->config; }
const std::vector<Device*>& Runtime::devices() const { return impl_->set.devices; }
const std::vector<ExcludedDevice>& Runtime::excluded() const { return impl_->set.excluded; }
const std::vector<PhysicalDeviceInfo>& Runtime::physical_devices() const { return impl_->set.physical; }
const std::vector<SkippedPlugin>& Runtime::skipped_plugins() const { return impl_->skipped; }
const std::vector<PluginInfo>& Runtime::plugins() const { return impl_->set.plugins; }

Device* Runtime::find_device(const std::string& name) const {
  DeviceSpec spec = parse_device_spec(name);
  for (Device* d : impl_->set.devices)
    if (d->type() == spec.type && d->index() == spec.index) return d;
  return nullptr;
}

Device& Runtime::device(const std::string& name) const {
  if (Device* d = find_device(name)) return *d;
  std::string list;
  for (Device* d : impl_->set.devices) { if (!list.empty()) list += ", "; list += d->name(); }
  throw UsageError("no device " + parse_device_spec(name).canonical() + "; visible devices: " +
                   (list.empty() ? "(none)" : list));
}

Device& Runtime::default_device() const {
  if (impl_->set.devices.empty()) throw RuntimeError("no devices are available (run axon-devices to see why)");
  return *impl_->set.devices.front();
}

Device* Runtime::cpu_device() const { return impl_->set.cpu; }

std::optional<std::string> Runtime::failed_plugin(const std::string& type) const {
  return failure_for_type(impl_->unloaded, type);
}

std::string Runtime::why_no_device(const std::string& type) const {
  std::vector<std::string> visible;
  for (const Device* d : impl_->set.devices)
    if (d->type() == type) visible.push_back(d->name());
  return why_no_device_of(type, impl_->set.plugins, impl_->set.excluded, visible, "visible ");
}

int Runtime::count(const std::string& type) const {
  std::string t = upper(type);
  if (t == "CUDA") t = "GPU";
  return static_cast<int>(std::count_if(impl_->set.devices.begin(), impl_->set.devices.end(),
                                        [&](const Device* d) { return d->type() == t; }));
}

}  // namespace axon
