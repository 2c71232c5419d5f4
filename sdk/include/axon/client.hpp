// The calling side of plugin_abi.h, header-only, the mirror of plugin.hpp:
// for programs that drive a plugin's C tables themselves (axon's kernel
// tests and benchmarks, axon-plugin-check, a plugin author's own harness).
// A status becomes an exception naming the call, device memory is freed on
// every path, and a kernel call is built from tensors. axon's runtime has
// its own path (core/); this is for tools.
#pragma once

#include <axon/plugin_abi.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace axon::client {

// "AXON_OUT_OF_MEMORY: <the plugin's message>" ("no message" when empty).
inline std::string status_text(axon_status s, const axon_error& err) {
  const size_t n = strnlen(err.message, sizeof err.message);
  return std::string(axon_status_name(s)) + ": " + (n ? std::string(err.message, n) : std::string("no message"));
}

// A call of a plugin's table that failed: what() names the call and carries
// the status and the plugin's message.
class CallFailed : public std::runtime_error {
 public:
  explicit CallFailed(const std::string& what, axon_status status = AXON_INTERNAL)
      : std::runtime_error(what), status_(status) {}
  // The status the plugin returned (AXON_INTERNAL where the plugin's answer
  // was wrong in another way, a NULL pointer with AXON_OK).
  axon_status status() const { return status_; }

 private:
  axon_status status_;
};

// An axon_error for one call.
inline axon_error new_error() {
  axon_error err{};
  err.struct_size = sizeof err;
  return err;
}

// Throws CallFailed("<what> returned <status_text>") unless s is AXON_OK.
inline void check(axon_status s, const axon_error& err, const std::string& what) {
  if (s != AXON_OK) throw CallFailed(what + " returned " + status_text(s, err), s);
}

// A table the plugin owns, read into one of this header's size: fields past
// the plugin's struct_size are NULL.
template <class T>
T read_table(const T& table) {
  T out{};
  std::memcpy(&out, &table, table.struct_size < sizeof out ? table.struct_size : sizeof out);
  return out;
}

// Calls a plugin's entry point (AXON_PLUGIN_ENTRY_SYMBOL) and reads its table.
inline axon_plugin_api get_plugin_api(axon_plugin_get_api_fn entry, const axon_host_api& host) {
  const axon_plugin_api* table = nullptr;
  axon_error err = new_error();
  check(entry(&host, &table, &err), err, AXON_PLUGIN_ENTRY_SYMBOL);
  if (table == nullptr) throw CallFailed(AXON_PLUGIN_ENTRY_SYMBOL " returned AXON_OK and no table");
  return read_table(*table);
}

// Opens device `physical_id` and reads its table (close it with its close()).
inline axon_device_api open_device(const axon_plugin_api& plugin, int32_t physical_id,
                                   const axon_device_config& config) {
  const axon_device_api* table = nullptr;
  axon_error err = new_error();
  check(plugin.open_device(plugin.plugin_ctx, physical_id, &config, &table, &err), err, "open_device");
  if (table == nullptr) throw CallFailed("open_device returned AXON_OK and no table");
  return read_table(*table);
}

inline void synchronize(const axon_device_api& api) {
  axon_error err = new_error();
  check(api.synchronize(api.device_ctx, &err), err, "synchronize");
}

// Buffers of one device, all freed when this goes (or by free_all).
class DeviceMemory {
 public:
  explicit DeviceMemory(const axon_device_api& api) : api_(api) {}
  ~DeviceMemory() { free_all(); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // nullptr for 0 bytes, as the host never asks for them.
  void* allocate(size_t bytes) {
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    axon_error err = new_error();
    check(api_.allocate(api_.device_ctx, bytes, &p, &err), err, "allocate(" + std::to_string(bytes) + ")");
    if (p == nullptr) throw CallFailed("allocate(" + std::to_string(bytes) + ") returned AXON_OK and a NULL pointer");
    held_.push_back(p);
    return p;
  }
  void upload(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    axon_error err = new_error();
    check(api_.copy_host_to_device(api_.device_ctx, dst, src, bytes, &err), err, "copy_host_to_device");
  }
  void download(void* dst, const void* src, size_t bytes) const {
    if (bytes == 0) return;
    axon_error err = new_error();
    check(api_.copy_device_to_host(api_.device_ctx, dst, src, bytes, &err), err, "copy_device_to_host");
  }
  void free_all() {
    for (void* p : held_) api_.deallocate(api_.device_ctx, p);
    held_.clear();
  }

 private:
  const axon_device_api& api_;
  std::vector<void*> held_;
};

// The kernel call of op `op` with these tensors and attributes (pointing
// into the vectors, which must outlive it), on `stream` (nullptr: the device's).
inline axon_kernel_call kernel_call(const char* op, const std::vector<axon_tensor>& inputs,
                                    std::vector<axon_tensor>& outputs, const void* attrs,
                                    axon_stream stream = nullptr) {
  axon_kernel_call call{};
  call.struct_size = sizeof call;
  call.op = op;
  call.num_inputs = static_cast<int32_t>(inputs.size());
  call.inputs = inputs.data();
  call.num_outputs = static_cast<int32_t>(outputs.size());
  call.outputs = outputs.data();
  call.attrs = attrs;
  call.stream = stream;
  return call;
}

// Calls kernel `fn` of op `op` on the device with these tensors and
// attributes; throws CallFailed("<what> returned ...") when it fails.
inline void call_kernel(const axon_device_api& api, axon_kernel_fn fn, const char* op,
                        const std::vector<axon_tensor>& inputs, std::vector<axon_tensor>& outputs,
                        const void* attrs, const std::string& what) {
  const axon_kernel_call call = kernel_call(op, inputs, outputs, attrs);
  axon_error err = new_error();
  check(fn(api.device_ctx, &call, &err), err, what);
}

// The plugin's extension `name` at `version` as a T (an axon_*_extension
// struct), or nullptr: an older table without get_extension, no such
// extension, or one smaller than T.
template <class T>
const T* extension(const axon_plugin_api& plugin, const char* name, uint32_t version) {
  if (plugin.struct_size < AXON_STRUCT_SIZE(axon_plugin_api, get_extension) || plugin.get_extension == nullptr)
    return nullptr;
  const T* e = static_cast<const T*>(plugin.get_extension(plugin.plugin_ctx, name, version));
  return e != nullptr && e->struct_size >= sizeof(T) ? e : nullptr;
}

// Whether the device runs this call (its supports(); a table without one
// runs every call).
inline bool supports(const axon_device_api& api, const axon_kernel_call& call) {
  if (api.struct_size < AXON_STRUCT_SIZE(axon_device_api, supports) || api.supports == nullptr) return true;
  return api.supports(api.device_ctx, &call) != 0;
}

}  // namespace axon::client
