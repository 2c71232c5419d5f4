#include "gradient_buckets.hpp"

#include <axon/error.hpp>
#include <axon/nn/replica.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace axon::nn {

std::vector<GradientSegment> gradient_segments(Replica& replica) {
  const std::vector<PlanStep>& plan = replica.plan();
  const std::vector<Layer*> layers = replica.layers();
  // Each step stands for nodes first..output (a fused step two or three).
  std::vector<size_t> step_of(layers.size(), 0);
  for (size_t k = 0; k < plan.size(); ++k)
    for (int node = plan[k].first; node <= plan[k].output; ++node) step_of.at(static_cast<size_t>(node)) = k;
  const std::vector<int64_t>& offsets = replica.buffers().offsets();
  std::vector<GradientSegment> out;
  size_t j = 0;  // the weight's index in parameters() order, which offsets follows
  for (size_t i = 0; i < layers.size(); ++i)
    for (const Parameter* p : layers[i]->parameters()) {
      if (p->trainable) out.push_back({offsets.at(j), step_of[i]});
      ++j;
    }
  return out;  // in buffer order: bind() lays the trainable weights out in this order
}

std::vector<GradientBucket> gradient_buckets(const std::vector<GradientSegment>& segments, int64_t buffer_floats,
                                             int64_t cap_floats) {
  for (size_t i = 1; i < segments.size(); ++i)
    if (segments[i].begin < segments[i - 1].begin)
      throw RuntimeError("gradient buckets: weight " + std::to_string(i) + " is out of buffer order");
  if (cap_floats <= 0 || segments.empty()) return {{0, buffer_floats, 0}};
  std::vector<GradientBucket> out;
  int64_t end = buffer_floats;
  // A bucket is complete once backward has run the earliest plan step of
  // its weights (steps need not follow buffer order: fusion.cpp moves the
  // readers of one tensor together).
  size_t earliest = std::numeric_limits<size_t>::max();  // of the bucket being gathered
  for (size_t i = segments.size(); i-- > 0;) {
    const GradientSegment& s = segments[i];
    earliest = std::min(earliest, s.step);
    // The first weight starts the last bucket whatever its size: the
    // buffer's start (padding before it included) belongs to it.
    if (end - s.begin < cap_floats && i > 0) continue;
    out.push_back({i == 0 ? 0 : s.begin, end, earliest});
    end = s.begin;
    earliest = std::numeric_limits<size_t>::max();
  }
  return out;
}

BucketProgress::BucketProgress(std::vector<GradientBucket> buckets, int replicas)
    : buckets_(std::move(buckets)), written_(static_cast<size_t>(replicas), 0) {}

void BucketProgress::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::fill(written_.begin(), written_.end(), 0);
  finished_ = 0;
  aborted_ = false;
}

void BucketProgress::advance(int r, size_t count) {
  size_t& w = written_.at(static_cast<size_t>(r));
  if (count <= w) return;
  w = count;
  cv_.notify_all();
}

// written_[r] changes only on replica r's thread, so that thread reads it
// without the lock; waiters read it under the lock.
void BucketProgress::publish(int r, size_t count) {
  const size_t from = written_.at(static_cast<size_t>(r));
  if (count <= from) return;
  if (on_written_) on_written_(r, from, count);  // outside the lock: it calls the device
  std::lock_guard<std::mutex> lock(mutex_);
  advance(r, count);
}

void BucketProgress::backward_ran(int r, size_t step) {
  size_t count = written_.at(static_cast<size_t>(r));
  while (count < buckets_.size() && buckets_[count].last_step >= step) ++count;
  publish(r, count);
}

void BucketProgress::finished(int r) {
  publish(r, buckets_.size());
  std::lock_guard<std::mutex> lock(mutex_);
  if (++finished_ == static_cast<int>(written_.size())) finished_at_ = Clock::now();
}

void BucketProgress::abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  cv_.notify_all();
}

bool BucketProgress::wait(size_t b) {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] {
    return aborted_ || std::all_of(written_.begin(), written_.end(), [&](size_t w) { return w > b; });
  });
  return !aborted_;
}

BucketProgress::Clock::time_point BucketProgress::finished_at() {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_at_;
}

}  // namespace axon::nn
