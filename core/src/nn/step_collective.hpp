// A collective the replicas of one process make mid-step (synchronized batch
// normalisation): each replica's thread hands in its tensor and waits; local
// replica 0, which runs on the thread that started the step (the only one
// that may call MPI), sums them all with the strategy's all-reduce, over
// every worker, and lets the others go on. A replica that fails aborts it,
// so the others stop waiting and fail with it (PeerFailed).
#pragma once

#include "replica_threads.hpp"

#include <axon/strategy.hpp>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace axon::nn {

class StepCollective {
 public:
  StepCollective(Strategy& strategy, int replicas);

  // Called once by each local replica (0 .. replicas-1) with its tensor;
  // returns when every tensor holds the sum over every replica.
  void all_reduce(int replica, Tensor& t, const std::string& what);
  // A replica failed: every waiting or later call throws until reset().
  void abort();
  // Before each step (its number names the collectives in errors).
  void reset(int64_t step);

 private:
  Strategy& strategy_;
  int replicas_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Tensor*> slots_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  int64_t step_ = 0;
  bool aborted_ = false;
};

}  // namespace axon::nn
