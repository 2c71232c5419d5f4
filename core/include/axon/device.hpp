// A device the runtime may place ops on: one opened device of one plugin,
// with its logical name (/device:GPU:0). Thin C++ face over axon_device_api.
#pragma once

#include <axon/error.hpp>
#include <axon/op_table.hpp>
#include <axon/plugin_abi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace axon {

class Plugin;  // a loaded plugin (core/src/loader)

// A kernel returned AXON_UNIMPLEMENTED: the device declines this call (its
// shapes or attributes) and wrote nothing, so it may run elsewhere.
class KernelDeclined : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

class Device {
 public:
  // "/device:CPU:0"
  const std::string& name() const { return name_; }
  // "CPU", "GPU", "REF"
  const std::string& type() const { return type_; }
  // N in /device:TYPE:N (logical, after visibility filtering)
  int index() const { return index_; }
  // the plugin's own device number
  int physical_id() const { return props_.physical_id; }
  int priority() const { return priority_; }
  // Whether its memory is the host's (axon_device_props.host_memory): a
  // tensor's data may be read and written in place once the device is synchronized.
  bool host_memory() const { return props_.host_memory == 1; }
  const std::string& plugin_name() const { return plugin_name_; }
  const axon_device_props& props() const { return props_; }

  // Memory. Throws RuntimeError with the plugin's message on failure.
  void* allocate(size_t bytes);
  void deallocate(void* p) noexcept;
  void copy_host_to_device(void* dst, const void* src, size_t bytes);
  void copy_device_to_host(void* dst, const void* src, size_t bytes);
  void copy_device_to_device(void* dst, const void* src, size_t bytes);
  void synchronize();
  axon_memory_info memory_info();  // zeros when the plugin does not report

  // The kernel of (op, dtype), resolved through get_kernel once when the
  // device opens and cached; nullptr when the device has none.
  axon_kernel_fn kernel(OpId op, axon_dtype dtype) const;
  bool has_kernel(OpId op, axon_dtype dtype) const { return kernel(op, dtype) != nullptr; }
  // By name, for listings and tests; false for a name the op table lacks.
  bool has_kernel(const char* op, axon_dtype dtype) const;
  // Whether the device runs this call of an op it has a kernel for (the
  // plugin's supports(); true when it has none).
  bool supports(const axon_kernel_call& call) const;
  // Runs the kernel; throws RuntimeError("<op> on <device>: <plugin message>
  // (AXON_...)"), KernelDeclined for AXON_UNIMPLEMENTED.
  void launch(const axon_kernel_call& call, OpId op, axon_dtype dtype);
  // Events, where the plugin has them (its device table's event_create and
  // the rest); each throws RuntimeError with the plugin's message.
  bool has_events() const;
  axon_event create_event();
  void destroy_event(axon_event event) noexcept;
  // The point after the work queued on the device's stream so far.
  void record_event(axon_event event);
  // Work queued on the device's stream from now on starts after the point.
  void wait_event(axon_event event);
  // Waits until the point is reached; throws the error of the work before it.
  void synchronize_event(axon_event event);
  // The table's ops this device has a kernel for, with their dtypes, in table order.
  struct OpKernels {
    OpId op;
    std::vector<axon_dtype> dtypes;
  };
  std::vector<OpKernels> kernels() const;
  // Names the plugin lists (list_ops) that the op table does not know.
  std::vector<std::string> unknown_ops() const;

  // The plugin's device table; opens the device on first use.
  const axon_device_api& api() const;
  const axon_plugin_api& plugin_api() const;
  // Whether open_device has been called (devices open lazily, so listing
  // them never reserves GPU memory or loads kernel libraries).
  bool is_open() const { return opened_.load(std::memory_order_acquire); }
  // The name this device had before visibility filtering ("/device:GPU:1"):
  // with AXON_VISIBLE_DEVICES=gpu:1 it is /device:GPU:0 -> /device:GPU:1.
  const std::string& original_name() const { return original_name_; }
  // The plugin's collectives (all-reduce among its devices, across
  // processes), or nullptr when it offers none. Fields beyond the plugin's
  // struct_size read as NULL, so check each function before calling it.
  const axon_collective_api* collectives() const { return has_collectives_ ? &collectives_ : nullptr; }
  // The configuration open_device receives.
  const axon_device_config& open_config() const { return config_; }

  // Constructed by the registry only. Nothing is opened here.
  Device(const Plugin* plugin, const axon_plugin_api* plugin_api, const axon_device_props& props, std::string type,
         int index, int original_index, const axon_device_config& config);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();

 private:
  void ensure_open() const;

  // The plugin this device came from; it is never freed, and this keeps it
  // reachable (a leak checker sees it held, not lost).
  [[maybe_unused]] const Plugin* plugin_;
  const axon_plugin_api* plugin_api_;
  mutable axon_device_api api_{};
  mutable std::mutex open_mutex_;
  mutable std::atomic<bool> opened_{false};
  // Filled once under open_mutex_ before opened_ is set; read-only after.
  mutable std::array<axon_kernel_fn, kOpCount * kDtypeCount> kernels_{};
  axon_device_props props_;
  axon_device_config config_;
  axon_collective_api collectives_{};
  bool has_collectives_ = false;
  std::string type_;
  int index_;
  int priority_;
  std::string name_;
  std::string original_name_;
  std::string plugin_name_;
};

// An event of one device (Device::create_event), destroyed with this.
class DeviceEvent {
 public:
  explicit DeviceEvent(Device& device) : device_(&device), event_(device.create_event()) {}
  ~DeviceEvent() {
    if (event_ != nullptr) device_->destroy_event(event_);
  }
  DeviceEvent(DeviceEvent&& o) noexcept : device_(o.device_), event_(o.event_) { o.event_ = nullptr; }
  DeviceEvent& operator=(DeviceEvent&&) = delete;
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  Device& device() const { return *device_; }
  axon_event get() const { return event_; }
  void record() { device_->record_event(event_); }
  // The device's stream waits for this event's point.
  void wait() { device_->wait_event(event_); }

 private:
  Device* device_;
  axon_event event_;
};

// Parses "/device:GPU:1", "gpu:1", "cuda:1", "GPU" (index 0), case-insensitive,
// into an upper-case type ("GPU"; "CUDA" maps to "GPU") and an index.
// Throws UsageError for anything else.
struct DeviceSpec {
  std::string type;
  int index = 0;
  std::string canonical() const;  // "/device:GPU:1"
};
DeviceSpec parse_device_spec(const std::string& text);
// A comma-separated list of device names (--visible-devices): blank items
// are passed over; a malformed name is parse_device_spec's UsageError.
std::vector<DeviceSpec> parse_device_list(const std::string& list);

}  // namespace axon
