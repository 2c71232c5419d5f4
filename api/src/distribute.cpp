// axon::distribute over the core's strategies (the same factory calls as
// axon-train --strategy mirrored).
#include "context.hpp"

#include <axon/api/distribute.hpp>
#include <axon/strategy.hpp>

namespace axon::distribute {
namespace {
thread_local axon::Strategy* t_strategy = nullptr;
}

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

std::vector<std::string> MirroredStrategy::devices() const {
  std::vector<std::string> names;
  for (const Device* d : strategy_->replica_devices()) names.push_back(d->name());
  return names;
}

StrategyScope MirroredStrategy::scope() { return StrategyScope(*strategy_); }

axon::Strategy& MirroredStrategy::strategy() { return *strategy_; }

StrategyScope::StrategyScope(axon::Strategy& strategy) : previous_(t_strategy) { t_strategy = &strategy; }
StrategyScope::~StrategyScope() { t_strategy = previous_; }
axon::Strategy* StrategyScope::current() { return t_strategy; }

}  // namespace axon::distribute
