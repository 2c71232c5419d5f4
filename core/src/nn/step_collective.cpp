#include "step_collective.hpp"

#include <axon/error.hpp>

namespace axon::nn {

StepCollective::StepCollective(Strategy& strategy, int replicas)
    : strategy_(strategy), replicas_(replicas), slots_(static_cast<size_t>(replicas), nullptr) {}

void StepCollective::all_reduce(int replica, Tensor& t, const std::string& what) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (aborted_) throw PeerFailed(what + ": another replica failed");
  slots_[static_cast<size_t>(replica)] = &t;
  ++arrived_;
  const uint64_t generation = generation_;
  if (replica != 0) {
    cv_.notify_all();
    cv_.wait(lock, [&] { return generation_ != generation || aborted_; });
    if (generation_ == generation) throw PeerFailed(what + ": another replica failed");
    return;
  }
  cv_.wait(lock, [&] { return arrived_ == replicas_ || aborted_; });
  if (aborted_) throw PeerFailed(what + ": another replica failed");
  try {
    strategy_.all_reduce(slots_, what, step_);
  } catch (...) {
    aborted_ = true;
    cv_.notify_all();
    throw;
  }
  arrived_ = 0;
  ++generation_;
  cv_.notify_all();
}

void StepCollective::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  cv_.notify_all();
}

void StepCollective::reset(int64_t step) {
  std::lock_guard<std::mutex> lock(mutex_);
  step_ = step;
  aborted_ = false;
  arrived_ = 0;
}

}  // namespace axon::nn
