// The gradient all-reduce overlapped with backward (PyTorch DDP's buckets):
// the flat gradient buffer cut into buckets in reverse layer order, each
// summed over the replicas as soon as every local replica's backward has
// written it, while backward goes on to earlier layers. The elementwise sums
// are those of one all-reduce over the whole buffer (the strategies sum
// element by element in a fixed order), so the bits do not change.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <mutex>
#include <vector>

namespace axon::nn {

class Replica;

// Floats [begin, end) of the gradient buffer, complete once backward has run
// plan step `last_step`, the earliest of its weights' (backward walks the
// plan from its last step down).
struct GradientBucket {
  int64_t begin = 0, end = 0;
  size_t last_step = 0;
};

// A trainable weight's gradient: where it starts in the buffer, and the plan
// step whose backward writes it.
struct GradientSegment {
  int64_t begin = 0;
  size_t step = 0;
};

// The replica's trainable weights in buffer order, each with the plan step
// that writes its gradient.
std::vector<GradientSegment> gradient_segments(Replica& replica);

// Buckets of at least cap_floats floats (the last one, at the buffer's
// start, may be smaller), first the one at the buffer's end (the last
// layers', with the metric sums after them), each starting at a weight.
// `segments` in buffer order; cap_floats 0 or no segments: one bucket, the
// whole buffer.
std::vector<GradientBucket> gradient_buckets(const std::vector<GradientSegment>& segments, int64_t buffer_floats,
                                             int64_t cap_floats);

// Which buckets each local replica has written during a step, for the
// thread that all-reduces them in order.
class BucketProgress {
 public:
  using Clock = std::chrono::steady_clock;
  BucketProgress(std::vector<GradientBucket> buckets, int replicas);

  const std::vector<GradientBucket>& buckets() const { return buckets_; }
  // Before each step.
  void reset();
  // Called on replica r's thread before buckets [from, to) count as written
  // by it: where the replica marks the point its device has queued them to
  // (an event the queued all-reduce starts after). Set before the first step.
  void set_on_written(std::function<void(int r, size_t from, size_t to)> f) { on_written_ = std::move(f); }
  // Replica r's backward has run plan step `step`.
  void backward_ran(int r, size_t step);
  // Replica r has written all its gradients.
  void finished(int r);
  // A replica failed: wait() returns false from now on, until reset().
  void abort();
  // Until every replica has written bucket b; false when aborted.
  bool wait(size_t b);
  // When the last replica finished (after every replica did).
  Clock::time_point finished_at();

 private:
  void advance(int r, size_t count);
  // Marks buckets [written, count) of replica r written, after on_written_.
  void publish(int r, size_t count);

  const std::vector<GradientBucket> buckets_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<size_t> written_;  // per replica: buckets written, counted from the first
  int finished_ = 0;
  Clock::time_point finished_at_;
  bool aborted_ = false;
  std::function<void(int, size_t, size_t)> on_written_;
};

}  // namespace axon::nn
