// Header-only C++ layer over plugin_abi.h so a backend author writes ordinary
// C++: derive from axon::sdk::Plugin and axon::sdk::Device, register kernels in
// a KernelTable, and end one source file with AXON_DEFINE_PLUGIN(factory).
// Exceptions thrown by plugin code are caught here, at the boundary, and turned
// into a status code plus message; they never reach the host.
#pragma once

#include <axon/op_table.hpp>
#include <axon/op_validate.hpp>
#include <axon/plugin_abi.h>

#include <algorithm>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace axon::sdk {

// ------------------------------------------------------------------ errors

// Throw this from plugin code to return a specific status.
class Error : public std::exception {
 public:
  Error(axon_status code, std::string message) : code_(code), message_(std::move(message)) {}
  axon_status code() const noexcept { return code_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  axon_status code_;
  std::string message_;
};

inline std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

[[noreturn]] inline void fail(axon_status code, const std::string& message) { throw Error(code, message); }

inline void require(bool ok, const std::string& message) {
  if (!ok) fail(AXON_INVALID_ARGUMENT, message);
}

inline void set_error(axon_error* err, const char* message) {
  if (err == nullptr) return;
  std::snprintf(err->message, sizeof err->message, "%s", message);
  err->struct_size = sizeof(axon_error);
}

// Runs f(); converts any exception into a status and message.
template <class F>
axon_status guarded(axon_error* err, F&& f) noexcept {
  try {
    f();
    return AXON_OK;
  } catch (const Error& e) {
    set_error(err, e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_error(err, "host out of memory");
    return AXON_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(err, e.what());
    return AXON_INTERNAL;
  } catch (...) {
    set_error(err, "unknown exception in plugin");
    return AXON_INTERNAL;
  }
}

// Writes `value` into a struct the caller handed over to be filled: no more
// than the caller's struct_size says it holds (a caller built against an
// older header has a smaller struct), with struct_size set to what was written.
template <class T>
void fill_callers_struct(T* out, T value) {
  const size_t room = out->struct_size < sizeof(T) ? out->struct_size : sizeof(T);
  value.struct_size = room;
  std::memcpy(static_cast<void*>(out), &value, room);
}

// Copies a string into a fixed char array, truncating.
template <size_t N>
void copy_string(char (&dst)[N], const std::string& src) {
  std::snprintf(dst, N, "%s", src.c_str());
}

// ------------------------------------------------------------------ tensors

using ::axon::dtype_name;
using ::axon::dtype_size;

// A thin view over axon_tensor with checked accessors.
class TensorRef {
 public:
  explicit TensorRef(const axon_tensor& t) : t_(t) {}
  int rank() const { return t_.rank; }
  int64_t dim(int i) const { return t_.dims[i < 0 ? t_.rank + i : i]; }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t_.rank; ++i) n *= t_.dims[i];
    return n;
  }
  axon_dtype dtype() const { return t_.dtype; }
  template <class T>
  T* data() const { return static_cast<T*>(t_.data); }
  void* raw() const { return t_.data; }
  std::string shape_string() const {
    std::string s = "[";
    for (int i = 0; i < t_.rank; ++i) (s += (i ? "," : "")) += std::to_string(t_.dims[i]);  // not "," + str: GCC 12 -Wrestrict false positive
    return s + "]";
  }
  const axon_tensor& c() const { return t_; }

 private:
  const axon_tensor& t_;
};

// The C++ face of one kernel invocation.
class KernelCall {
 public:
  explicit KernelCall(const axon_kernel_call& c) : c_(c) {}
  const char* op() const { return c_.op; }
  // The stream the call is queued on; nullptr: the device's own.
  axon_stream stream() const {
    return c_.struct_size >= AXON_STRUCT_SIZE(axon_kernel_call, stream) ? c_.stream : nullptr;
  }
  int num_inputs() const { return c_.num_inputs; }
  int num_outputs() const { return c_.num_outputs; }
  TensorRef input(int i) const {
    if (i >= c_.num_inputs) fail(AXON_INVALID_ARGUMENT, format("%s: expected input %d, got %d inputs", c_.op, i, c_.num_inputs));
    return TensorRef(c_.inputs[i]);
  }
  TensorRef output(int i) const {
    if (i >= c_.num_outputs) fail(AXON_INVALID_ARGUMENT, format("%s: expected output %d, got %d outputs", c_.op, i, c_.num_outputs));
    return TensorRef(c_.outputs[i]);
  }
  // Checks counts: throws with the op name when they differ.
  void expect_arity(int inputs, int outputs) const {
    if (c_.num_inputs != inputs || c_.num_outputs != outputs)
      fail(AXON_INVALID_ARGUMENT, format("%s: expected %d inputs and %d outputs, got %d and %d", c_.op, inputs, outputs,
                                         c_.num_inputs, c_.num_outputs));
  }
  // Checks the whole call against the op table (op_validate.hpp): counts,
  // dtypes, ranks, attributes and the op's shape rule. The host has already
  // run this; a plugin calls it where it must not trust its caller.
  void validate() const {
    const OpSchema* s = find_op(c_.op);
    if (s == nullptr) fail(AXON_UNIMPLEMENTED, format("%s: not an op of the table", c_.op));
    std::string why;
    if (!validate_call(*s, c_, &why)) fail(AXON_INVALID_ARGUMENT, why);
  }
  // The attribute struct, checked to be present and to hold at least the
  // fields up to `min_size` (by default all the fields the op table's ABI
  // minor defines, as the validator requires).
  template <class A>
  const A& attrs(size_t min_size = attr_info(attr_kind_of<A>::value).min_size) const {
    const A* a = static_cast<const A*>(c_.attrs);
    if (a == nullptr) fail(AXON_INVALID_ARGUMENT, format("%s: attributes missing", c_.op));
    if (a->struct_size < min_size)
      fail(AXON_INVALID_ARGUMENT, format("%s: attribute struct too small (%zu < %zu bytes)", c_.op, a->struct_size, min_size));
    return *a;
  }

 private:
  const axon_kernel_call& c_;
};

// ------------------------------------------------------------------ devices

class Device {
 public:
  virtual ~Device() = default;
  virtual void* allocate(size_t bytes) = 0;  // throw Error(AXON_OUT_OF_MEMORY, ...) on failure
  virtual void deallocate(void* p) noexcept = 0;
  virtual void copy_host_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_device_to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void copy_device_to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() {}
  virtual axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) = 0;
  virtual const char* const* list_ops() = 0;
  virtual axon_memory_info memory_info() {
    axon_memory_info m{};
    m.struct_size = sizeof m;
    return m;
  }
  // Whether this device runs the call (an op it has a kernel for): false
  // declines it, and the host runs it elsewhere. Only shapes, dtypes and
  // attributes may be read. A kernel that finds out only when it runs throws
  // Error(AXON_UNIMPLEMENTED, why) before writing anything instead.
  virtual bool supports(const axon_kernel_call& call) {
    (void)call;
    return true;
  }

  // Streams, events and asynchronous copies: a device that has them says so
  // and overrides all of them; the host sees none otherwise. A stream and an
  // event are the device's own objects behind axon_stream and axon_event; a
  // null stream is the device's own.
  virtual bool has_events() const { return false; }
  virtual axon_stream stream_create() { fail(AXON_UNIMPLEMENTED, "no streams"); }
  virtual void stream_destroy(axon_stream stream) noexcept { (void)stream; }
  virtual axon_event event_create() { fail(AXON_UNIMPLEMENTED, "no events"); }
  virtual void event_destroy(axon_event event) noexcept { (void)event; }
  virtual void event_record(axon_event event, axon_stream stream) { (void)event, (void)stream; }
  virtual void event_wait(axon_event event, axon_stream stream) { (void)event, (void)stream; }
  virtual bool event_query(axon_event event) {
    (void)event;
    return true;
  }
  virtual void event_synchronize(axon_event event) { (void)event; }
  virtual void copy_host_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
    (void)stream;
    copy_host_to_device(dst, src, bytes);
  }
  virtual void copy_device_to_host_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
    (void)stream;
    copy_device_to_host(dst, src, bytes);
  }
  virtual void copy_device_to_device_async(void* dst, const void* src, size_t bytes, axon_stream stream) {
    (void)stream;
    copy_device_to_device(dst, src, bytes);
  }

 private:
  // The device's table, the one open_device hands out (valid until close
  // deletes this device).
  axon_device_api table_{};
  friend const axon_device_api* device_table(Device* d);
};

// Maps (op, dtype) -> kernel function. Build one per device kind, statically.
// Ops are found through the op table (find_op), so a name the table lacks is
// refused when it is added, not silently never called.
class KernelTable {
 public:
  KernelTable& add(const char* op, axon_dtype dtype, axon_kernel_fn fn) {
    const OpSchema* s = find_op(op);
    if (s == nullptr) fail(AXON_INTERNAL, format("KernelTable: %s is not an op of the op table", op));
    if (!kernel_dtype_allowed(*s, dtype))
      fail(AXON_INTERNAL, format("KernelTable: the op table keys no %s kernel by %s", op, dtype_name(dtype)));
    axon_kernel_fn& slot = fns_[static_cast<size_t>(s->id) * kDtypeCount + static_cast<size_t>(dtype)];
    if (slot == nullptr && !has_any(s->id)) order_.push_back(s->id);
    slot = fn;
    rebuild_list();
    return *this;
  }
  // `fn` as op `op`'s kernel for every dtype the op table keys it by.
  KernelTable& add(OpId op, axon_kernel_fn fn) {
    const OpSchema& s = op_schema(op);
    for (int t = 0; t < kDtypeCount; ++t)
      if (kernel_dtype_allowed(s, static_cast<axon_dtype>(t))) add(s.name, static_cast<axon_dtype>(t), fn);
    return *this;
  }
  axon_kernel_fn find(const char* op, axon_dtype dtype) const {
    const OpSchema* s = op == nullptr ? nullptr : find_op(op);
    if (s == nullptr || static_cast<unsigned>(dtype) >= static_cast<unsigned>(kDtypeCount)) return nullptr;
    return fns_[static_cast<size_t>(s->id) * kDtypeCount + static_cast<size_t>(dtype)];
  }
  const char* const* list() const { return list_.data(); }

 private:
  bool has_any(OpId id) const {
    for (int t = 0; t < kDtypeCount; ++t)
      if (fns_[static_cast<size_t>(id) * kDtypeCount + t] != nullptr) return true;
    return false;
  }
  void rebuild_list() {
    list_.clear();
    for (OpId id : order_) list_.push_back(op_name(id));
    list_.push_back(nullptr);
  }
  axon_kernel_fn fns_[kOpCount * kDtypeCount] = {};
  std::vector<OpId> order_;  // in the order ops were added, for list()
  std::vector<const char*> list_{nullptr};
};

// Turns `void F(DeviceT&, const KernelCall&)` into an axon_kernel_fn.
template <class DeviceT, void (*F)(DeviceT&, const KernelCall&)>
axon_status kernel(void* device_ctx, const axon_kernel_call* call, axon_error* err) {
  return guarded(err, [&] { F(static_cast<DeviceT&>(*static_cast<Device*>(device_ctx)), KernelCall(*call)); });
}

namespace detail {
template <class D, class = void>
struct has_kernel_scope : std::false_type {};
template <class D>
struct has_kernel_scope<D, std::void_t<decltype(std::declval<D&>().kernel_scope())>> : std::true_type {};
}  // namespace detail

// Turns op Op's kernel `void F(DeviceT&, const KernelCall&)` into an
// axon_kernel_fn that checks the call against the op table first
// (op_validate.hpp: counts, dtypes, ranks, shapes, attributes; a message only
// on failure), so F checks only its device's limits and the data. Where
// DeviceT has a member kernel_scope(), its result is held while F runs: a
// lock serialising the device's kernels, the device made current.
template <OpId Op, class DeviceT, void (*F)(DeviceT&, const KernelCall&)>
axon_status validated_kernel(void* device_ctx, const axon_kernel_call* call, axon_error* err) {
  return guarded(err, [&] {
    std::string why;
    if (!validate_call(op_schema(Op), *call, &why)) fail(AXON_INVALID_ARGUMENT, why);
    auto& d = static_cast<DeviceT&>(*static_cast<Device*>(device_ctx));
    if constexpr (detail::has_kernel_scope<DeviceT>::value) {
      [[maybe_unused]] const auto scope = d.kernel_scope();
      F(d, KernelCall(*call));
    } else {
      F(d, KernelCall(*call));
    }
  });
}

// Registers F, validated, as op Op's kernel for each dtype the op table keys it by.
template <OpId Op, class DeviceT, void (*F)(DeviceT&, const KernelCall&)>
void add_validated(KernelTable& t) {
  t.add(Op, &validated_kernel<Op, DeviceT, F>);
}

// ------------------------------------------------------------------ plugins

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual int device_count() noexcept = 0;
  virtual axon_device_props device_props(int physical_id) = 0;
  virtual std::unique_ptr<Device> open_device(int physical_id, const axon_device_config& config) = 0;
  // Why device_count() is 0; empty when it is not.
  virtual std::string unavailable_reason() { return {}; }
  virtual std::vector<axon_excluded_device> excluded_devices() { return {}; }
  virtual const axon_collective_api* collectives() { return nullptr; }
  // The extension `name` at `version` (a static struct starting with
  // struct_size), or nullptr.
  virtual const void* extension(const char* name, uint32_t version) {
    (void)name, (void)version;
    return nullptr;
  }

  const axon_host_api* host = nullptr;
  const char* plugin_name = "";

  // Logging and configuration through the host (safe if the host lacks them).
  void log(axon_log_level level, const std::string& message) const {
    if (host && host->struct_size >= AXON_STRUCT_SIZE(axon_host_api, log) && host->log)
      host->log(host->host_ctx, level, plugin_name, message.c_str());
  }
  const char* config(const char* key) const {
    if (host && host->struct_size >= AXON_STRUCT_SIZE(axon_host_api, get_config) && host->get_config)
      return host->get_config(host->host_ctx, key);
    return nullptr;
  }

  std::string reason_storage;  // keeps unavailable_reason()'s string alive
};

namespace detail {

inline Device& dev(void* ctx) { return *static_cast<Device*>(ctx); }

}  // namespace detail

// Fills the device's own table and returns it; the table goes with the
// device when the host closes it.
inline const axon_device_api* device_table(Device* d) {
  axon_device_api* out = &d->table_;
  *out = axon_device_api{};
  out->struct_size = sizeof *out;
  out->device_ctx = d;
  out->allocate = [](void* c, size_t bytes, void** ptr, axon_error* err) {
    return guarded(err, [&] { *ptr = detail::dev(c).allocate(bytes); });
  };
  out->deallocate = [](void* c, void* p) { detail::dev(c).deallocate(p); };
  out->copy_host_to_device = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_host_to_device(dst, src, n); });
  };
  out->copy_device_to_host = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_device_to_host(dst, src, n); });
  };
  out->copy_device_to_device = [](void* c, void* dst, const void* src, size_t n, axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_device_to_device(dst, src, n); });
  };
  out->synchronize = [](void* c, axon_error* err) { return guarded(err, [&] { detail::dev(c).synchronize(); }); };
  out->get_kernel = [](void* c, const char* op, axon_dtype t) -> axon_kernel_fn {
    try {
      return detail::dev(c).get_kernel(op, t);
    } catch (...) {
      return nullptr;
    }
  };
  out->list_ops = [](void* c) { return detail::dev(c).list_ops(); };
  out->memory_info = [](void* c, axon_memory_info* info, axon_error* err) {
    return guarded(err, [&] {
      require(info != nullptr, "memory_info: no place for the answer");
      fill_callers_struct(info, detail::dev(c).memory_info());
    });
  };
  out->close = [](void* c) { delete &detail::dev(c); };
  out->supports = [](void* c, const axon_kernel_call* call) -> int32_t {
    try {
      return call != nullptr && detail::dev(c).supports(*call) ? 1 : 0;
    } catch (...) {
      return 0;
    }
  };
  if (!d->has_events()) return out;
  out->stream_create = [](void* c, axon_stream* s, axon_error* err) {
    return guarded(err, [&] {
      require(s != nullptr, "stream_create: no place for the stream");
      *s = detail::dev(c).stream_create();
    });
  };
  out->stream_destroy = [](void* c, axon_stream s) {
    if (s != nullptr) detail::dev(c).stream_destroy(s);
  };
  out->event_create = [](void* c, axon_event* e, axon_error* err) {
    return guarded(err, [&] {
      require(e != nullptr, "event_create: no place for the event");
      *e = detail::dev(c).event_create();
    });
  };
  out->event_destroy = [](void* c, axon_event e) {
    if (e != nullptr) detail::dev(c).event_destroy(e);
  };
  out->event_record = [](void* c, axon_event e, axon_stream s, axon_error* err) {
    return guarded(err, [&] {
      require(e != nullptr, "event_record: a NULL event");
      detail::dev(c).event_record(e, s);
    });
  };
  out->event_wait = [](void* c, axon_event e, axon_stream s, axon_error* err) {
    return guarded(err, [&] {
      require(e != nullptr, "event_wait: a NULL event");
      detail::dev(c).event_wait(e, s);
    });
  };
  out->event_query = [](void* c, axon_event e, int32_t* done, axon_error* err) {
    return guarded(err, [&] {
      require(e != nullptr && done != nullptr, "event_query: a NULL event or answer");
      *done = 0;
      *done = detail::dev(c).event_query(e) ? 1 : 0;
    });
  };
  out->event_synchronize = [](void* c, axon_event e, axon_error* err) {
    return guarded(err, [&] {
      require(e != nullptr, "event_synchronize: a NULL event");
      detail::dev(c).event_synchronize(e);
    });
  };
  out->copy_host_to_device_async = [](void* c, void* dst, const void* src, size_t n, axon_stream s,
                                      axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_host_to_device_async(dst, src, n, s); });
  };
  out->copy_device_to_host_async = [](void* c, void* dst, const void* src, size_t n, axon_stream s,
                                      axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_device_to_host_async(dst, src, n, s); });
  };
  out->copy_device_to_device_async = [](void* c, void* dst, const void* src, size_t n, axon_stream s,
                                        axon_error* err) {
    return guarded(err, [&] { detail::dev(c).copy_device_to_device_async(dst, src, n, s); });
  };
  return out;
}

namespace detail {

inline Plugin& plug(void* ctx) { return *static_cast<Plugin*>(ctx); }

}  // namespace detail

// Fills the plugin's table `out` (static, like the Plugin object) from a
// Plugin object.
inline void fill_plugin_api(Plugin* p, const axon_host_api* host, const char* name, const char* version,
                            const char* device_type, int32_t priority, axon_plugin_api* out) {
  p->host = host;
  p->plugin_name = name;
  *out = axon_plugin_api{};
  out->struct_size = sizeof *out;
  out->abi_major = AXON_ABI_MAJOR;
  out->abi_minor = AXON_ABI_MINOR;
  out->name = name;
  out->version = version;
  out->device_type = device_type;
  out->priority = priority;
  out->plugin_ctx = p;
  out->device_count = [](void* c) -> int32_t { return detail::plug(c).device_count(); };
  out->get_device_props = [](void* c, int32_t id, axon_device_props* props, axon_error* err) {
    return guarded(err, [&] {
      require(props != nullptr, "get_device_props: no place for the answer");
      fill_callers_struct(props, detail::plug(c).device_props(id));
    });
  };
  out->open_device = [](void* c, int32_t id, const axon_device_config* cfg, const axon_device_api** api,
                        axon_error* err) {
    return guarded(err, [&] {
      require(cfg != nullptr && api != nullptr, "open_device: null config or table");
      axon_device_config conf{};
      std::memcpy(&conf, cfg, std::min(cfg->struct_size, sizeof conf));  // older hosts send less
      conf.struct_size = sizeof conf;
      std::unique_ptr<Device> d = detail::plug(c).open_device(id, conf);
      *api = device_table(d.release());
    });
  };
  out->unavailable_reason = [](void* c) -> const char* {
    Plugin& pl = detail::plug(c);
    try {
      pl.reason_storage = pl.unavailable_reason();
    } catch (...) {
      pl.reason_storage = "unknown";
    }
    return pl.reason_storage.empty() ? nullptr : pl.reason_storage.c_str();
  };
  out->excluded_count = [](void* c) -> int32_t {
    try {
      return static_cast<int32_t>(detail::plug(c).excluded_devices().size());
    } catch (...) {
      return 0;
    }
  };
  out->get_excluded = [](void* c, int32_t i, axon_excluded_device* dst, axon_error* err) {
    return guarded(err, [&] {
      auto all = detail::plug(c).excluded_devices();
      require(i >= 0 && i < static_cast<int32_t>(all.size()), "excluded device index out of range");
      require(dst != nullptr, "get_excluded: no place for the answer");
      fill_callers_struct(dst, all[i]);
    });
  };
  out->collectives = p->collectives();
  out->get_extension = [](void* c, const char* ext, uint32_t ext_version) -> const void* {
    try {
      return ext != nullptr ? detail::plug(c).extension(ext, ext_version) : nullptr;
    } catch (...) {
      return nullptr;
    }
  };
}

}  // namespace axon::sdk

// Defines the plugin's entry point. `factory` is an expression yielding a
// heap-allocated axon::sdk::Plugin*; the object and its table are never
// freed because plugins are never unloaded.
#define AXON_DEFINE_PLUGIN(factory, name, version, device_type, priority)                                      \
  extern "C" AXON_PLUGIN_EXPORT axon_status axon_plugin_get_api(const axon_host_api* host,                      \
                                                                const axon_plugin_api** api, axon_error* err) { \
    return ::axon::sdk::guarded(err, [&] {                                                                      \
      if (host == nullptr || api == nullptr) ::axon::sdk::fail(AXON_INVALID_ARGUMENT, "null host or table");    \
      if (host->abi_major != AXON_ABI_MAJOR)                                                                    \
        ::axon::sdk::fail(AXON_UNAVAILABLE, ::axon::sdk::format("built for ABI major %d, this axon has %u",        \
                                                                AXON_ABI_MAJOR, host->abi_major));              \
      static ::axon::sdk::Plugin* instance = (factory);                                                        \
      static axon_plugin_api table{};                                                                           \
      ::axon::sdk::fill_plugin_api(instance, host, name, version, device_type, priority, &table);              \
      *api = &table;                                                                                            \
    });                                                                                                         \
  }
