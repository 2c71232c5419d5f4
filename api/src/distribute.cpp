// axon::distribute over the core's strategies (the same factory calls as
// axon-train --strategy mirrored).
#include "context.hpp"

#include <axon/api/distribute.hpp>
#include <axon/strategy.hpp>
#include <axon/workers.hpp>

namespace axon::distribute {
namespace {

thread_local axon::Strategy* t_strategy = nullptr;

std::vector<std::string> names(const axon::Strategy& s) {
  std::vector<std::string> out;
  for (const Device* d : s.replica_devices()) out.push_back(d->name());
  return out;
}

}  // namespace

MirroredStrategy::MirroredStrategy(const std::vector<std::string>& devices) {
  Runtime& rt = api_detail::runtime();
  std::vector<Device*> replicas;
  if (devices.empty()) {
    replicas = mirrored_devices(rt);
  } else {
    for (const std::string& name : devices) replicas.push_back(&rt.device(name));
  }
  for (Device* d : replicas) d->api();  // initialised, as TensorFlow's strategy does
  strategy_ = make_mirrored_strategy(replicas);
}

MirroredStrategy::~MirroredStrategy() = default;

int MirroredStrategy::num_replicas_in_sync() const { return strategy_->num_replicas_in_sync(); }

std::vector<std::string> MirroredStrategy::devices() const { return names(*strategy_); }

StrategyScope MirroredStrategy::scope() { return StrategyScope(*strategy_); }

axon::Strategy& MirroredStrategy::strategy() { return *strategy_; }

MultiWorkerMirroredStrategy::MultiWorkerMirroredStrategy(double collective_timeout_s)
    : collective_timeout_s_(collective_timeout_s), workers_(Workers::join()) {
  cluster_resolver_.task_id = workers_->rank();
}

axon::Strategy& MultiWorkerMirroredStrategy::built() const {
  if (!strategy_) {
    std::vector<Device*> replicas = mirrored_devices(api_detail::runtime());
    for (Device* d : replicas) d->api();
    strategy_ = make_multi_worker_strategy(replicas, *workers_, collective_timeout_s_);
  }
  return *strategy_;
}

// The strategy goes before the workers it uses (MPI is finalised last).
MultiWorkerMirroredStrategy::~MultiWorkerMirroredStrategy() { strategy_.reset(); }

int MultiWorkerMirroredStrategy::num_replicas_in_sync() const { return built().num_replicas_in_sync(); }
int MultiWorkerMirroredStrategy::num_workers() const { return workers_->size(); }
int MultiWorkerMirroredStrategy::worker_rank() const { return workers_->rank(); }
bool MultiWorkerMirroredStrategy::is_chief() const { return workers_->rank() == 0; }
std::vector<std::string> MultiWorkerMirroredStrategy::devices() const { return names(built()); }
StrategyScope MultiWorkerMirroredStrategy::scope() { return StrategyScope(built()); }
axon::Strategy& MultiWorkerMirroredStrategy::strategy() { return built(); }

StrategyScope::StrategyScope(axon::Strategy& strategy) : previous_(t_strategy) { t_strategy = &strategy; }
StrategyScope::~StrategyScope() { t_strategy = previous_; }
axon::Strategy* StrategyScope::current() { return t_strategy; }

}  // namespace axon::distribute
