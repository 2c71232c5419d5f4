// Distribution strategies (DESIGN.md "Distribution strategies"). A strategy
// says which devices hold a replica of the model, how the global batch is
// split among them, and how gradients are combined. Only the one-device
// strategy exists now; `mirrored` (one replica per local device, gradients
// summed by the backend's all-reduce) and `multi-worker` (one process per
// worker under mpirun) implement this same interface in a later issue.
#pragma once

#include <axon/device.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace axon {

class Strategy {
 public:
  virtual ~Strategy() = default;

  // "default", "mirrored", "multi-worker"
  virtual std::string name() const = 0;
  // One device per replica, in replica order (replica 0 first).
  virtual const std::vector<Device*>& replica_devices() const = 0;
  int num_replicas() const { return static_cast<int>(replica_devices().size()); }

  // Processes taking part; 1 and rank 0 for strategies inside one process.
  virtual int num_workers() const { return 1; }
  virtual int worker_rank() const { return 0; }
  // Only the chief prints progress and writes files.
  bool is_chief() const { return worker_rank() == 0; }

  // The per-replica batch for a global batch; UsageError unless the global
  // batch splits evenly over all replicas of all workers.
  int64_t per_replica_batch(int64_t global_batch) const;
  // "global batch 64 = 32 per replica x 2 replicas"; with one replica
  // "batch 64 on /device:CPU:0".
  std::string describe_batch(int64_t global_batch) const;

  // Sums each parameter's gradient over all replicas, in place, so every
  // replica applies the same update. grads[r][i] is parameter i's gradient on
  // replica r. A no-op with a single replica.
  virtual void all_reduce_gradients(const std::vector<std::vector<Tensor*>>& grads) = 0;
};

// Everything on one device.
class OneDeviceStrategy final : public Strategy {
 public:
  explicit OneDeviceStrategy(Device& device) : devices_{&device} {}
  std::string name() const override { return "default"; }
  const std::vector<Device*>& replica_devices() const override { return devices_; }
  void all_reduce_gradients(const std::vector<std::vector<Tensor*>>& grads) override;

 private:
  std::vector<Device*> devices_;
};

// The strategy names accepted by --strategy.
std::vector<std::string> strategy_names();
// Builds a strategy by name on `device` (for the one-device strategy). Names
// that are planned but not built yet, and unknown names, are a UsageError.
std::unique_ptr<Strategy> make_strategy(const std::string& name, Device& device);

}  // namespace axon
