#include "plugin_collectives.hpp"

#include "collective_messages.hpp"

#include <axon/error.hpp>

namespace axon::distribute {

void check_one_plugin(const std::vector<Device*>& devices, const std::string& strategy) {
  for (Device* d : devices) {
    if (d->plugin_name() == devices.front()->plugin_name()) continue;
    std::string list;
    for (Device* e : devices) list += (list.empty() ? "" : ", ") + e->name() + " (plugin " + e->plugin_name() + ")";
    throw UsageError(strategy + ": the replicas' devices come from different plugins, which cannot all-reduce "
                     "together: " + list + "; choose devices of one plugin with --visible-devices");
  }
  if (devices.size() < 2) return;
  const axon_collective_api* c = devices.front()->collectives();
  if (c == nullptr || c->all_reduce == nullptr)
    throw UsageError(strategy + ": plugin " + devices.front()->plugin_name() +
                     " has no all-reduce for its devices, so it cannot hold several replicas");
}

namespace {

// The failure of an all-reduce of `what`, naming the step and the devices.
RuntimeError all_reduce_failed(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers,
                               const std::string& what, int64_t step, const axon_error& err) {
  std::string names;
  for (Device* d : devices) names += (names.empty() ? "" : ", ") + d->name();
  return RuntimeError("all-reduce of " + what + " (" + byte_count(buffers.front()->bytes()) + ") at step " +
                      std::to_string(step) + " over " + names + ": " + err.message);
}

// The devices' contexts and the buffers' data, as the plugin's all-reduce takes them.
struct Operands {
  std::vector<void*> contexts, data;
};
Operands operands(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers) {
  Operands o;
  for (size_t i = 0; i < devices.size(); ++i) {
    o.contexts.push_back(devices[i]->api().device_ctx);
    o.data.push_back(buffers[i]->data());
  }
  return o;
}

}  // namespace

void plugin_all_reduce(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers,
                       const std::string& what, int64_t step) {
  const axon_collective_api* c = devices.front()->collectives();
  if (c == nullptr || c->all_reduce == nullptr) {
    if (devices.size() == 1) return;
    throw RuntimeError("plugin " + devices.front()->plugin_name() + " has no all-reduce");
  }
  Operands o = operands(devices, buffers);
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = c->all_reduce(devices.front()->plugin_api().plugin_ctx, static_cast<int32_t>(devices.size()),
                                      o.contexts.data(), o.data.data(), buffers.front()->numel(), AXON_FLOAT32,
                                      AXON_REDUCE_SUM, &err);
  if (s != AXON_OK) throw all_reduce_failed(devices, buffers, what, step, err);
}

bool plugin_queues_all_reduce(const std::vector<Device*>& devices) {
  const axon_collective_api* c = devices.front()->collectives();
  if (c == nullptr || c->all_reduce_async == nullptr) return false;
  for (Device* d : devices)
    if (!d->has_events()) return false;
  return true;
}

void plugin_all_reduce_queued(const std::vector<Device*>& devices, const std::vector<Tensor*>& buffers,
                              const std::string& what, int64_t step, const std::vector<axon_event>& ready,
                              const std::vector<axon_event>& done) {
  const axon_collective_api* c = devices.front()->collectives();
  if (c == nullptr || c->all_reduce_async == nullptr || ready.size() != devices.size() || done.size() != devices.size())
    throw RuntimeError("plugin " + devices.front()->plugin_name() + " cannot queue the all-reduce of " + what);
  Operands o = operands(devices, buffers);
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = c->all_reduce_async(
      devices.front()->plugin_api().plugin_ctx, static_cast<int32_t>(devices.size()), o.contexts.data(),
      o.data.data(), buffers.front()->numel(), AXON_FLOAT32, AXON_REDUCE_SUM, ready.data(), done.data(), &err);
  if (s != AXON_OK) throw all_reduce_failed(devices, buffers, what, step, err);
}

}  // namespace axon::distribute
