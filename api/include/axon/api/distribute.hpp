// tf.distribute for C++: a strategy whose scope() decides where the models
// built in it keep their replicas, with axon-train --strategy's semantics
// (docs/distributed.md): the batch given to fit is the global batch, split
// over num_replicas_in_sync() replicas whose gradients are summed.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace axon {
class Strategy;
class Workers;
}

namespace axon::distribute {

class StrategyScope;

class MirroredStrategy {
 public:
  // One replica per device: `devices` ("/gpu:0", "/gpu:1"), or every visible
  // GPU (without one: every logical CPU device). Initialises the devices.
  explicit MirroredStrategy(const std::vector<std::string>& devices = {});
  ~MirroredStrategy();
  MirroredStrategy(const MirroredStrategy&) = delete;
  MirroredStrategy& operator=(const MirroredStrategy&) = delete;
  int num_replicas_in_sync() const;
  // The replica devices, "/device:CPU:0", ...
  std::vector<std::string> devices() const;
  // with strategy.scope(): models built while it lives use this strategy.
  [[nodiscard]] StrategyScope scope();
  axon::Strategy& strategy();

 private:
  std::unique_ptr<axon::Strategy> strategy_;
};

// TensorFlow's cluster_resolver: this worker's place in the job.
struct ClusterResolver {
  std::string task_type = "worker";
  int task_id = 0;  // the rank: 0 is the chief
};

// One worker of a job mpirun started (`mpirun -np 2 ./app`), each mirroring
// over its own devices as MirroredStrategy does; gradients are summed over
// every replica of every worker (axon-train --strategy multi-worker). Every
// worker runs the same program on the same data: fit splits each global
// batch over all replicas, and only the chief (rank 0) prints. Started
// without mpirun it is a job of one worker. Collectives that do not finish
// within collective_timeout_s (0: never) throw RuntimeError naming the rank.
// Made first thing, as in TensorFlow: the constructor joins the job (the rank
// is known at once, before any data or device); the devices are initialised
// when first needed (num_replicas_in_sync, devices, scope, strategy), so
// axon::config settings made after the constructor still apply.
class MultiWorkerMirroredStrategy {
 public:
  explicit MultiWorkerMirroredStrategy(double collective_timeout_s = 0);
  ~MultiWorkerMirroredStrategy();
  MultiWorkerMirroredStrategy(const MultiWorkerMirroredStrategy&) = delete;
  MultiWorkerMirroredStrategy& operator=(const MultiWorkerMirroredStrategy&) = delete;
  int num_replicas_in_sync() const;
  int num_workers() const;
  int worker_rank() const;
  bool is_chief() const;
  const ClusterResolver& cluster_resolver() const { return cluster_resolver_; }
  std::vector<std::string> devices() const;  // this worker's replica devices
  [[nodiscard]] StrategyScope scope();
  axon::Strategy& strategy();
  // The job's processes, for what this layer does not wrap (launched(),
  // abort() after a failure so that no worker waits for this one).
  axon::Workers& workers() { return *workers_; }

 private:
  axon::Strategy& built() const;

  double collective_timeout_s_;
  std::unique_ptr<axon::Workers> workers_;
  ClusterResolver cluster_resolver_;
  mutable std::unique_ptr<axon::Strategy> strategy_;
};

class StrategyScope {
 public:
  explicit StrategyScope(axon::Strategy& strategy);
  ~StrategyScope();
  StrategyScope(const StrategyScope&) = delete;
  StrategyScope& operator=(const StrategyScope&) = delete;
  // The strategy of the innermost scope on this thread, or nullptr.
  static axon::Strategy* current();

 private:
  axon::Strategy* previous_;
};

}  // namespace axon::distribute
