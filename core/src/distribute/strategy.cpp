// What every strategy shares: the split of a global batch over replicas, the
// batch-size check, and copies between the local replicas.
#include <axon/error.hpp>
#include <axon/runtime.hpp>
#include <axon/strategy.hpp>

#include <algorithm>
#include <cstddef>

namespace axon {

Strategy::Strategy(std::vector<Device*> devices) : devices_(std::move(devices)) {
  if (devices_.empty()) throw UsageError("a strategy needs at least one device");
}

std::pair<int64_t, int64_t> Strategy::replica_slice(int64_t n, int local) const {
  const int64_t replicas = num_replicas_in_sync();
  const int64_t g = global_replica_index(local);
  const int64_t base = n / replicas, extra = n % replicas;
  const int64_t begin = g * base + std::min(g, extra);
  return {begin, begin + base + (g < extra ? 1 : 0)};
}

void Strategy::check_global_batch(int64_t global_batch) const {
  const int64_t r = num_replicas_in_sync();
  if (global_batch <= 0) throw UsageError("the batch size must be positive, got " + std::to_string(global_batch));
  if (global_batch % r == 0) return;
  const int64_t below = global_batch / r * r, above = below + r;
  throw UsageError("--batch-size " + std::to_string(global_batch) + " (the global batch) does not split evenly over " +
                   std::to_string(r) + " replicas in sync; use a multiple of " + std::to_string(r) + " (" +
                   (below > 0 ? std::to_string(below) + " or " : std::string()) + std::to_string(above) + ")");
}

void Strategy::check_buffers(const std::vector<Tensor*>& buffers) const {
  if (buffers.size() != devices_.size())
    throw RuntimeError(name() + ": " + std::to_string(buffers.size()) + " buffers for " +
                       std::to_string(devices_.size()) + " local replicas");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const Tensor& b = *buffers[i];
    if (b.dtype() != AXON_FLOAT32 || b.numel() != buffers[0]->numel() || &b.device() != devices_[i])
      throw RuntimeError(name() + ": replica " + std::to_string(i) + "'s buffer is not a float32 tensor of " +
                         std::to_string(buffers[0]->numel()) + " elements on " + devices_[i]->name());
  }
}

void Strategy::copy_to_local_replicas(const std::vector<Tensor*>& buffers) const {
  if (buffers.size() < 2 || buffers[0]->bytes() == 0) return;
  // Devices share nothing but host memory (plugin_abi.h copies stay on one device).
  std::vector<std::byte> host(buffers[0]->bytes());
  buffers[0]->copy_to_host(host.data(), host.size());
  for (size_t i = 1; i < buffers.size(); ++i) buffers[i]->copy_from_host(host.data(), host.size());
}

void Strategy::set_bucket_bytes(int64_t bytes) {
  if (bytes < 0) throw UsageError("the all-reduce bucket size must be 0 or positive, got " + std::to_string(bytes));
  bucket_bytes_ = bytes;
}

void Strategy::all_reduce_queued(const std::vector<Tensor*>&, const std::string& what, int64_t,
                                 const std::vector<axon_event>&, const std::vector<axon_event>&) {
  throw RuntimeError(name() + " cannot queue the all-reduce of " + what);
}

bool Strategy::overlaps_backward() const {
  return queues_all_reduce() ||
         std::all_of(devices_.begin(), devices_.end(), [](const Device* d) { return d->plugin_name() == "cpu"; });
}

std::vector<Device*> mirrored_devices(const Runtime& rt) {
  if (rt.config().visible_devices) return rt.devices();
  std::vector<Device*> out;
  const std::string& type = rt.default_device().type();
  for (Device* d : rt.devices())
    if (d->type() == type) out.push_back(d);
  return out;
}

std::vector<std::string> strategy_names() { return {"default", "mirrored", "multi-worker"}; }

}  // namespace axon
