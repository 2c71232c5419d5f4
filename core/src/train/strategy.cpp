#include <axon/error.hpp>
#include <axon/strategy.hpp>

namespace axon {

int64_t Strategy::per_replica_batch(int64_t global_batch) const {
  const int64_t parts = static_cast<int64_t>(num_replicas()) * num_workers();
  if (global_batch <= 0) throw UsageError("batch size must be positive, got " + std::to_string(global_batch));
  if (global_batch % parts != 0)
    throw UsageError("global batch " + std::to_string(global_batch) + " does not split evenly over " +
                     std::to_string(parts) + " replicas; use a multiple of " + std::to_string(parts));
  return global_batch / parts;
}

std::string Strategy::describe_batch(int64_t global_batch) const {
  const int64_t parts = static_cast<int64_t>(num_replicas()) * num_workers();
  if (parts == 1) return "batch " + std::to_string(global_batch) + " on " + replica_devices().front()->name();
  return "global batch " + std::to_string(global_batch) + " = " + std::to_string(per_replica_batch(global_batch)) +
         " per replica x " + std::to_string(parts) + " replicas";
}

void OneDeviceStrategy::all_reduce_gradients(const std::vector<std::vector<Tensor*>>& grads) {
  if (grads.size() > 1) throw RuntimeError("the default strategy has one replica, got gradients of " +
                                           std::to_string(grads.size()));
}

std::vector<std::string> strategy_names() { return {"default"}; }

std::unique_ptr<Strategy> make_strategy(const std::string& name, Device& device) {
  if (name == "default" || name == "one-device") return std::make_unique<OneDeviceStrategy>(device);
  if (name == "mirrored" || name == "multi-worker")
    throw UsageError("strategy '" + name + "' is not available in this build yet; use --strategy default");
  throw UsageError("unknown strategy '" + name + "'; expected default");
}

}  // namespace axon
