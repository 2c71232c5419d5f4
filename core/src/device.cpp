// Device: the C++ face of one plugin device, opened on first use.
#include <axon/device.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/tensor.hpp>

#include "loader.hpp"

#include <algorithm>
#include <cstring>

namespace axon {
namespace {

std::string message_of(const axon_error& err) {
  std::string m(err.message, strnlen(err.message, sizeof err.message));
  return m.empty() ? "no message from the plugin" : m;
}

// "<plugin message> (AXON_INVALID_ARGUMENT)": the status by name.
std::string message_of(const axon_error& err, axon_status st) {
  return message_of(err) + " (" + axon_status_name(st) + ")";
}

}  // namespace

Device::Device(const Plugin* plugin, const axon_plugin_api* plugin_api, const axon_device_props& props,
               std::string type, int index, int original_index, const axon_device_config& config)
    : plugin_(plugin),
      plugin_api_(plugin_api),
      props_(props),
      config_(config),
      type_(std::move(type)),
      index_(index),
      priority_(plugin_api->priority),
      name_("/device:" + type_ + ":" + std::to_string(index)),
      original_name_("/device:" + type_ + ":" + std::to_string(original_index)),
      plugin_name_(plugin_api->name) {
  // Copied once, up to the plugin's struct_size: later fields read as NULL.
  if (const axon_collective_api* c = plugin_api->collectives;
      c != nullptr && c->struct_size >= AXON_STRUCT_SIZE(axon_collective_api, all_reduce)) {
    std::memcpy(&collectives_, c, std::min(c->struct_size, sizeof collectives_));
    collectives_.struct_size = sizeof collectives_;
    has_collectives_ = true;
  }
}

Device::~Device() {
  if (opened_.load() && api_.close) api_.close(api_.device_ctx);
}

void Device::ensure_open() const {
  if (opened_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(open_mutex_);
  if (opened_.load(std::memory_order_relaxed)) return;
  // The plugin's own table: read (up to its struct_size), never written.
  const axon_device_api* raw = nullptr;
  axon_error err{};
  err.struct_size = sizeof err;
  axon_status st = plugin_api_->open_device(plugin_api_->plugin_ctx, props_.physical_id, &config_, &raw, &err);
  if (st != AXON_OK)
    throw RuntimeError("cannot open " + name_ + " (plugin " + plugin_name_ + "): " + message_of(err, st));
  if (raw == nullptr)
    throw RuntimeError("cannot open " + name_ + " (plugin " + plugin_name_ + "): open_device returned no table");
  axon_device_api table{};
  if (auto bad = validate_device_table(*raw, table))
    throw RuntimeError("cannot open " + name_ + " (plugin " + plugin_name_ + "): " + *bad);
  api_ = table;
  // Each (op, dtype) is looked up once here; dispatch then indexes an array.
  for (const OpSchema& op : kOpTable)
    for (int t = 0; t < kDtypeCount; ++t)
      if (kernel_dtype_allowed(op, static_cast<axon_dtype>(t)))
        kernels_[static_cast<size_t>(op.id) * kDtypeCount + t] =
            api_.get_kernel(api_.device_ctx, op.name, static_cast<axon_dtype>(t));
  log::debug("device", "opened " + name_ + " (" + props_.name + ")");
  opened_.store(true, std::memory_order_release);
}

const axon_device_api& Device::api() const {
  ensure_open();
  return api_;
}

const axon_plugin_api& Device::plugin_api() const { return *plugin_api_; }

void* Device::allocate(size_t bytes) {
  ensure_open();
  void* p = nullptr;
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = api_.allocate(api_.device_ctx, bytes, &p, &err); st != AXON_OK)
    throw RuntimeError("allocating " + std::to_string(bytes) + " bytes on " + name_ + ": " + message_of(err, st));
  return p;
}

void Device::deallocate(void* p) noexcept {
  if (p != nullptr && opened_.load(std::memory_order_acquire)) api_.deallocate(api_.device_ctx, p);
}

void Device::copy_host_to_device(void* dst, const void* src, size_t bytes) {
  ensure_open();
  axon_error err{};
  if (axon_status st = api_.copy_host_to_device(api_.device_ctx, dst, src, bytes, &err); st != AXON_OK)
    throw RuntimeError("copy to " + name_ + ": " + message_of(err, st));
}

void Device::copy_device_to_host(void* dst, const void* src, size_t bytes) {
  ensure_open();
  axon_error err{};
  if (axon_status st = api_.copy_device_to_host(api_.device_ctx, dst, src, bytes, &err); st != AXON_OK)
    throw RuntimeError("copy from " + name_ + ": " + message_of(err, st));
}

void Device::copy_device_to_device(void* dst, const void* src, size_t bytes) {
  ensure_open();
  axon_error err{};
  if (axon_status st = api_.copy_device_to_device(api_.device_ctx, dst, src, bytes, &err); st != AXON_OK)
    throw RuntimeError("copy within " + name_ + ": " + message_of(err, st));
}

void Device::synchronize() {
  ensure_open();
  axon_error err{};
  if (axon_status st = api_.synchronize(api_.device_ctx, &err); st != AXON_OK)
    throw RuntimeError("synchronize " + name_ + ": " + message_of(err, st));
}

axon_memory_info Device::memory_info() {
  axon_memory_info info{};
  info.struct_size = sizeof info;  // what the plugin may write
  ensure_open();
  if (api_.memory_info == nullptr) return info;
  axon_error err{};
  if (axon_status st = api_.memory_info(api_.device_ctx, &info, &err); st != AXON_OK)
    throw RuntimeError("memory info of " + name_ + ": " + message_of(err, st));
  // Fields the plugin did not fill read as zero.
  axon_memory_info out{};
  std::memcpy(&out, &info, std::min(info.struct_size, sizeof info));
  out.struct_size = sizeof out;
  return out;
}

bool Device::has_events() const {
  ensure_open();
  return api_.event_create != nullptr;
}

axon_event Device::create_event() {
  if (!has_events()) throw RuntimeError(name_ + " (plugin " + plugin_name_ + ") has no events");
  axon_event e = nullptr;
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = api_.event_create(api_.device_ctx, &e, &err); st != AXON_OK)
    throw RuntimeError("creating an event on " + name_ + ": " + message_of(err, st));
  if (e == nullptr) throw RuntimeError("creating an event on " + name_ + ": the plugin returned no event");
  return e;
}

void Device::destroy_event(axon_event event) noexcept {
  if (event != nullptr && api_.event_destroy != nullptr) api_.event_destroy(api_.device_ctx, event);
}

void Device::record_event(axon_event event) {
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = api_.event_record(api_.device_ctx, event, nullptr, &err); st != AXON_OK)
    throw RuntimeError("recording an event on " + name_ + ": " + message_of(err, st));
}

void Device::wait_event(axon_event event) {
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = api_.event_wait(api_.device_ctx, event, nullptr, &err); st != AXON_OK)
    throw RuntimeError("waiting for an event on " + name_ + ": " + message_of(err, st));
}

void Device::synchronize_event(axon_event event) {
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = api_.event_synchronize(api_.device_ctx, event, &err); st != AXON_OK)
    throw RuntimeError("synchronize " + name_ + " (an event): " + message_of(err, st));
}

axon_kernel_fn Device::kernel(OpId op, axon_dtype dtype) const {
  ensure_open();
  const unsigned t = static_cast<unsigned>(dtype);
  if (t >= static_cast<unsigned>(kDtypeCount)) return nullptr;
  return kernels_[static_cast<size_t>(op) * kDtypeCount + t];
}

bool Device::has_kernel(const char* op, axon_dtype dtype) const {
  const OpSchema* s = find_op(op);
  return s != nullptr && has_kernel(s->id, dtype);
}

bool Device::supports(const axon_kernel_call& call) const {
  ensure_open();
  return api_.supports == nullptr || api_.supports(api_.device_ctx, &call) != 0;
}

void Device::launch(const axon_kernel_call& call, OpId op, axon_dtype dtype) {
  axon_kernel_fn fn = kernel(op, dtype);
  if (fn == nullptr)
    throw RuntimeError(std::string("op ") + op_name(op) + " has no " + dtype_name(dtype) + " kernel on " + name_);
  axon_error err{};
  err.struct_size = sizeof err;
  if (axon_status st = fn(api_.device_ctx, &call, &err); st != AXON_OK) {
    const std::string what = std::string(op_name(op)) + " on " + name_ + ": " + message_of(err, st);
    if (st == AXON_UNIMPLEMENTED) throw KernelDeclined(what);
    throw RuntimeError(what);
  }
}

std::vector<Device::OpKernels> Device::kernels() const {
  ensure_open();
  std::vector<OpKernels> out;
  for (const OpSchema& op : kOpTable) {
    OpKernels k{op.id, {}};
    for (int t = 0; t < kDtypeCount; ++t)
      if (kernels_[static_cast<size_t>(op.id) * kDtypeCount + t] != nullptr) k.dtypes.push_back(static_cast<axon_dtype>(t));
    if (!k.dtypes.empty()) out.push_back(std::move(k));
  }
  return out;
}

std::vector<std::string> Device::unknown_ops() const {
  ensure_open();
  std::vector<std::string> out;
  if (const char* const* list = api_.list_ops(api_.device_ctx))
    for (; *list != nullptr; ++list)
      if (find_op(*list) == nullptr) out.emplace_back(*list);
  return out;
}

}  // namespace axon
