// MirroredStrategy: one replica per device of this process; the gradients
// are summed by the devices' plugin (CPU: in process, in device order; CUDA:
// one NCCL communicator over the replica GPUs).
#include "plugin_collectives.hpp"

#include <axon/error.hpp>
#include <axon/strategy.hpp>

namespace axon {
namespace {

class MirroredStrategy final : public Strategy {
 public:
  explicit MirroredStrategy(std::vector<Device*> devices) : Strategy(std::move(devices)) {
    distribute::check_one_plugin(replica_devices(), "--strategy mirrored");
  }
  std::string name() const override { return "mirrored"; }

  std::string describe(int64_t global_batch) const override {
    std::string names;
    for (Device* d : replica_devices()) names += (names.empty() ? "" : ", ") + d->name();
    const int n = num_replicas_in_sync();
    return "Using MirroredStrategy with " + std::to_string(n) + " replica" + (n == 1 ? "" : "s") + " in sync (" +
           names + "): global batch " + std::to_string(global_batch) + " = " + std::to_string(global_batch / n) +
           " per replica";
  }

  void all_reduce(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step) override {
    check_buffers(buffers);
    distribute::plugin_all_reduce(replica_devices(), buffers, what, step);
  }

  bool queues_all_reduce() const override { return distribute::plugin_queues_all_reduce(replica_devices()); }

  void all_reduce_queued(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step,
                         const std::vector<axon_event>& ready, const std::vector<axon_event>& done) override {
    check_buffers(buffers);
    distribute::plugin_all_reduce_queued(replica_devices(), buffers, what, step, ready, done);
  }

  void broadcast(const std::vector<Tensor*>& buffers, const std::string&) override {
    check_buffers(buffers);
    copy_to_local_replicas(buffers);
  }
};

}  // namespace

std::unique_ptr<Strategy> make_mirrored_strategy(std::vector<Device*> devices) {
  return std::make_unique<MirroredStrategy>(std::move(devices));
}

}  // namespace axon
