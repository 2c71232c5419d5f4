// ABI 1.x plugins under ABI 2: see abi1_shim.hpp and docs/plugin-guide.md.
#include "abi1_shim.hpp"

#include <axon/op_table.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace axon::abi1 {
namespace {

// ---------------------------------------------------------------- ABI 1.10's layouts
// The structs ABI 2 changed, as ABI 1.10 declared them (frozen here); the
// others (attributes, props, configs, memory info, errors, the host table)
// are the same in both.

struct Tensor {
  void* data;
  axon_dtype dtype;
  int32_t rank;
  int64_t dims[AXON_MAX_RANK];
};

struct KernelCall {
  size_t struct_size;
  const char* op;
  int32_t num_inputs;
  const Tensor* inputs;
  int32_t num_outputs;
  Tensor* outputs;
  const void* attrs;
};

using KernelFn = axon_status (*)(void* device_ctx, const KernelCall* call, axon_error* err);

// Up to supports (1.10); the events and asynchronous copies after it are
// not read.
struct DeviceApi {
  size_t struct_size;
  void* device_ctx;
  axon_status (*allocate)(void*, size_t, void**, axon_error*);
  void (*deallocate)(void*, void*);
  axon_status (*copy_host_to_device)(void*, void*, const void*, size_t, axon_error*);
  axon_status (*copy_device_to_host)(void*, void*, const void*, size_t, axon_error*);
  axon_status (*copy_device_to_device)(void*, void*, const void*, size_t, axon_error*);
  axon_status (*synchronize)(void*, axon_error*);
  KernelFn (*get_kernel)(void*, const char*, axon_dtype);
  const char* const* (*list_ops)(void*);
  axon_status (*memory_info)(void*, axon_memory_info*, axon_error*);
  void (*close)(void*);
  int32_t (*supports)(void*, const KernelCall*);
};

// ABI 1's collectives are ABI 2's without the asynchronous pair.
struct CollectiveApi {
  size_t struct_size;
  decltype(axon_collective_api::all_reduce) all_reduce;
  decltype(axon_collective_api::comm_get_id) comm_get_id;
  decltype(axon_collective_api::comm_create) comm_create;
  decltype(axon_collective_api::comm_all_reduce) comm_all_reduce;
  decltype(axon_collective_api::comm_destroy) comm_destroy;
};

struct PluginApi {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;
  const char* version;
  const char* device_type;
  int32_t priority;
  void* plugin_ctx;
  int32_t (*device_count)(void*);
  axon_status (*get_device_props)(void*, int32_t, axon_device_props*, axon_error*);
  axon_status (*open_device)(void*, int32_t, const axon_device_config*, DeviceApi*, axon_error*);
  const char* (*unavailable_reason)(void*);
  int32_t (*excluded_count)(void*);
  axon_status (*get_excluded)(void*, int32_t, axon_excluded_device*, axon_error*);
  const CollectiveApi* collectives;
  // get_extension (1.10) follows: not offered, its structs take the plugin's
  // own device contexts.
};

// ---------------------------------------------------------------- helpers

void set_error(axon_error* err, const std::string& message) {
  if (err != nullptr) std::snprintf(err->message, sizeof err->message, "%s", message.c_str());
}

// Copies the first struct_size bytes of a table the plugin filled.
template <class T>
T prefix_of(const T& raw) {
  T out{};
  std::memcpy(&out, &raw, std::min(raw.struct_size, sizeof(T)));
  return out;
}

// An ABI 1 plugin fills a table in the caller's memory, clearing as many
// bytes as its own header declared: room for a larger table than the one
// declared here.
template <class T>
struct Padded {
  alignas(alignof(std::max_align_t)) unsigned char bytes[sizeof(T) + 4096]{};
  T* get() { return reinterpret_cast<T*>(bytes); }
};

struct Plugin {
  PluginApi legacy{};
  axon_host_api host{};  // the host's, announcing ABI 1.10
  axon_plugin_api table{};
  axon_collective_api collectives{};
  CollectiveApi legacy_collectives{};
};

struct Device {
  Plugin* plugin = nullptr;
  DeviceApi legacy{};
  axon_device_api table{};
  std::array<KernelFn, kOpCount * kDtypeCount> kernels{};
};

Plugin& plug(void* ctx) { return *static_cast<Plugin*>(ctx); }
Device& dev(void* ctx) { return *static_cast<Device*>(ctx); }

// An ABI 2 call as an ABI 1 call: the tensors copied into the old layout.
class TranslatedCall {
 public:
  explicit TranslatedCall(const axon_kernel_call& c) {
    const int32_t ni = std::max(c.num_inputs, 0), no = std::max(c.num_outputs, 0);
    if (static_cast<size_t>(ni + no) > local_.size()) heap_.resize(static_cast<size_t>(ni + no));
    Tensor* t = heap_.empty() ? local_.data() : heap_.data();
    for (int32_t i = 0; i < ni + no; ++i) {
      const axon_tensor& s = i < ni ? c.inputs[i] : c.outputs[i - ni];
      t[i].data = s.data;
      t[i].dtype = s.dtype;
      t[i].rank = s.rank;
      std::memcpy(t[i].dims, s.dims, sizeof t[i].dims);
    }
    call_ = {sizeof(KernelCall), c.op, c.num_inputs, c.inputs ? t : nullptr, c.num_outputs,
             c.outputs ? t + ni : nullptr, c.attrs};
  }
  // Only the views are copied: the kernel writes the same memory.
  const KernelCall* get() const { return &call_; }

 private:
  std::array<Tensor, 16> local_{};
  std::vector<Tensor> heap_;
  KernelCall call_{};
};

axon_dtype call_dtype(const axon_kernel_call& c) {
  if (c.num_inputs > 0 && c.inputs != nullptr) return c.inputs[0].dtype;
  if (c.num_outputs > 0 && c.outputs != nullptr) return c.outputs[0].dtype;
  return AXON_FLOAT32;
}

// The plugin's kernel of (op, dtype), looked up when the device opened.
KernelFn legacy_kernel(const Device& d, const char* op, axon_dtype dtype) {
  const OpSchema* s = op != nullptr ? find_op(op) : nullptr;
  const auto t = static_cast<unsigned>(dtype);
  if (s == nullptr || t >= static_cast<unsigned>(kDtypeCount)) return nullptr;
  return d.kernels[static_cast<size_t>(s->id) * kDtypeCount + t];
}

axon_status run_kernel(void* ctx, const axon_kernel_call* call, axon_error* err) {
  Device& d = dev(ctx);
  KernelFn fn = call != nullptr ? legacy_kernel(d, call->op, call_dtype(*call)) : nullptr;
  if (fn == nullptr) {
    set_error(err, std::string(call && call->op ? call->op : "(no op)") + ": the ABI 1 plugin has no such kernel");
    return AXON_UNIMPLEMENTED;
  }
  const TranslatedCall old(*call);
  return fn(d.legacy.device_ctx, old.get(), err);
}

// ---------------------------------------------------------------- device table

void fill_device_table(Device& d) {
  axon_device_api& t = d.table;
  t.struct_size = AXON_STRUCT_SIZE(axon_device_api, supports);
  t.device_ctx = &d;
  t.allocate = [](void* c, size_t bytes, void** ptr, axon_error* err) {
    return dev(c).legacy.allocate(dev(c).legacy.device_ctx, bytes, ptr, err);
  };
  t.deallocate = [](void* c, void* p) { dev(c).legacy.deallocate(dev(c).legacy.device_ctx, p); };
  t.copy_host_to_device = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return dev(c).legacy.copy_host_to_device(dev(c).legacy.device_ctx, dst, src, n, err);
  };
  t.copy_device_to_host = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return dev(c).legacy.copy_device_to_host(dev(c).legacy.device_ctx, dst, src, n, err);
  };
  t.copy_device_to_device = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return dev(c).legacy.copy_device_to_device(dev(c).legacy.device_ctx, dst, src, n, err);
  };
  t.synchronize = [](void* c, axon_error* err) { return dev(c).legacy.synchronize(dev(c).legacy.device_ctx, err); };
  t.get_kernel = [](void* c, const char* op, axon_dtype dtype) -> axon_kernel_fn {
    return legacy_kernel(dev(c), op, dtype) != nullptr ? run_kernel : nullptr;
  };
  t.list_ops = [](void* c) { return dev(c).legacy.list_ops(dev(c).legacy.device_ctx); };
  if (d.legacy.memory_info != nullptr)
    t.memory_info = [](void* c, axon_memory_info* info, axon_error* err) {
      return dev(c).legacy.memory_info(dev(c).legacy.device_ctx, info, err);
    };
  t.close = [](void* c) {
    Device* closing = &dev(c);
    if (closing->legacy.close != nullptr) closing->legacy.close(closing->legacy.device_ctx);
    delete closing;
  };
  if (d.legacy.supports != nullptr)
    t.supports = [](void* c, const axon_kernel_call* call) -> int32_t {
      if (call == nullptr) return 0;
      const TranslatedCall old(*call);
      return dev(c).legacy.supports(dev(c).legacy.device_ctx, old.get());
    };
}

axon_status open_device(void* ctx, int32_t id, const axon_device_config* config, const axon_device_api** out,
                        axon_error* err) {
  Plugin& p = plug(ctx);
  Padded<DeviceApi> raw;
  raw.get()->struct_size = sizeof(DeviceApi);
  if (axon_status st = p.legacy.open_device(p.legacy.plugin_ctx, id, config, raw.get(), err); st != AXON_OK) return st;
  auto d = std::make_unique<Device>();
  d->plugin = &p;
  if (raw.get()->struct_size < AXON_STRUCT_SIZE(DeviceApi, list_ops)) {
    set_error(err, "axon_device_api.struct_size is " + std::to_string(raw.get()->struct_size) +
                       " bytes, less than the ABI 1 table's required fields");
    return AXON_INTERNAL;
  }
  d->legacy = prefix_of(*raw.get());
  // The host's own checks of required fields run on the ABI 2 table; here
  // only what the translation itself calls.
  const DeviceApi& l = d->legacy;
  if (!l.allocate || !l.deallocate || !l.copy_host_to_device || !l.copy_device_to_host || !l.copy_device_to_device ||
      !l.synchronize || !l.get_kernel || !l.list_ops) {
    set_error(err, "the ABI 1 device table lacks a required function");
    return AXON_INTERNAL;
  }
  for (const OpSchema& op : kOpTable)
    for (int t = 0; t < kDtypeCount; ++t)
      if (kernel_dtype_allowed(op, static_cast<axon_dtype>(t)))
        d->kernels[static_cast<size_t>(op.id) * kDtypeCount + t] =
            l.get_kernel(l.device_ctx, op.name, static_cast<axon_dtype>(t));
  fill_device_table(*d);
  *out = &d.release()->table;
  return AXON_OK;
}

// ---------------------------------------------------------------- collectives

axon_status all_reduce(void* ctx, int32_t n, void* const* device_ctxs, void* const* buffers, int64_t count,
                       axon_dtype dtype, axon_reduce_op op, axon_error* err) {
  std::vector<void*> old(static_cast<size_t>(std::max(n, 0)));
  for (int32_t i = 0; i < n; ++i) old[i] = dev(device_ctxs[i]).legacy.device_ctx;
  Plugin& p = plug(ctx);
  return p.legacy_collectives.all_reduce(p.legacy.plugin_ctx, n, old.data(), buffers, count, dtype, op, err);
}

axon_status comm_get_id(void* ctx, void* id, size_t* id_size, axon_error* err) {
  Plugin& p = plug(ctx);
  return p.legacy_collectives.comm_get_id(p.legacy.plugin_ctx, id, id_size, err);
}

axon_status comm_create(void* device_ctx, const void* id, size_t id_size, int32_t rank, int32_t world, void** comm,
                        axon_error* err) {
  Device& d = dev(device_ctx);
  return d.plugin->legacy_collectives.comm_create(d.legacy.device_ctx, id, id_size, rank, world, comm, err);
}

void fill_collectives(Plugin& p) {
  const CollectiveApi* raw = p.legacy.collectives;
  if (raw == nullptr || raw->struct_size < AXON_STRUCT_SIZE(CollectiveApi, all_reduce)) return;
  p.legacy_collectives = prefix_of(*raw);
  const CollectiveApi& l = p.legacy_collectives;
  axon_collective_api& c = p.collectives;
  c.struct_size = AXON_STRUCT_SIZE(axon_collective_api, comm_destroy);
  if (l.all_reduce) c.all_reduce = all_reduce;
  if (l.comm_get_id) c.comm_get_id = comm_get_id;
  if (l.comm_create) c.comm_create = comm_create;
  c.comm_all_reduce = l.comm_all_reduce;  // takes the plugin's own communicator: nothing to translate
  c.comm_destroy = l.comm_destroy;
  p.table.collectives = &p.collectives;
}

// ---------------------------------------------------------------- plugin table

void fill_plugin_table(Plugin& p) {
  const PluginApi& l = p.legacy;
  axon_plugin_api& t = p.table;
  t.struct_size = AXON_STRUCT_SIZE(axon_plugin_api, collectives);
  t.abi_major = AXON_ABI_MAJOR;
  t.abi_minor = 0;
  t.name = l.name;
  t.version = l.version;
  t.device_type = l.device_type;
  t.priority = l.priority;
  t.plugin_ctx = &p;
  if (l.device_count)
    t.device_count = [](void* c) { return plug(c).legacy.device_count(plug(c).legacy.plugin_ctx); };
  if (l.get_device_props)
    t.get_device_props = [](void* c, int32_t id, axon_device_props* props, axon_error* err) {
      return plug(c).legacy.get_device_props(plug(c).legacy.plugin_ctx, id, props, err);
    };
  if (l.open_device) t.open_device = open_device;
  if (l.unavailable_reason)
    t.unavailable_reason = [](void* c) { return plug(c).legacy.unavailable_reason(plug(c).legacy.plugin_ctx); };
  if (l.excluded_count && l.get_excluded) {
    t.excluded_count = [](void* c) { return plug(c).legacy.excluded_count(plug(c).legacy.plugin_ctx); };
    t.get_excluded = [](void* c, int32_t i, axon_excluded_device* out, axon_error* err) {
      return plug(c).legacy.get_excluded(plug(c).legacy.plugin_ctx, i, out, err);
    };
  }
  fill_collectives(p);
}

}  // namespace

axon_status load(InitFn init, const axon_host_api* host, const axon_plugin_api** api, uint32_t* minor,
                 axon_error* err) {
  auto p = std::make_unique<Plugin>();
  p->host = *host;
  p->host.abi_major = 1;
  p->host.abi_minor = kLastMinor;
  Padded<PluginApi> raw;
  raw.get()->struct_size = sizeof(PluginApi);
  if (axon_status st = init(&p->host, raw.get(), err); st != AXON_OK) return st;
  const PluginApi& r = *raw.get();
  if (r.struct_size < AXON_STRUCT_SIZE(PluginApi, abi_minor) || r.abi_major != 1) {
    set_error(err, "its entry point " + std::string(kEntrySymbol) + " is ABI 1's, but its table says ABI major " +
                       std::to_string(r.struct_size < AXON_STRUCT_SIZE(PluginApi, abi_minor) ? 0 : r.abi_major));
    return AXON_UNAVAILABLE;
  }
  p->legacy = prefix_of(r);
  *minor = r.abi_minor;
  fill_plugin_table(*p);
  // Like the plugin itself, kept for the process.
  *api = &p.release()->table;
  return AXON_OK;
}

}  // namespace axon::abi1
