// Batches of an ImageSet, prepared on a background thread while the device
// computes the previous one (double buffering). The order of each epoch is a
// seeded shuffle that depends only on (seed, epoch), so the background thread
// never affects what the model sees: results are the same with or without it.
#pragma once

#include <axon/data/mnist.hpp>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace axon::data {

// One batch on the host: uint8 pixels (NHWC, one channel) and int32 labels.
struct HostBatch {
  int64_t step = 0;  // index within the epoch
  int64_t size = 0;  // samples; the last batch of an epoch may be short
  std::vector<uint8_t> images;
  std::vector<int32_t> labels;
};

class BatchPipeline {
 public:
  // `set` must outlive the pipeline. batch_size > 0.
  BatchPipeline(const ImageSet& set, int64_t batch_size, bool shuffle, uint64_t seed, bool background = true);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  int64_t steps() const { return steps_; }  // ceil(count / batch_size)
  int64_t batch_size() const { return batch_size_; }
  int64_t count() const { return set_.count; }
  // The size of the batch at `step` (batch_size, or the remainder for the last).
  int64_t size_of(int64_t step) const;

  // Starts an epoch (abandoning any batches left of the previous one) and
  // begins preparing its batch `first_step` (0, or where a resumed epoch
  // stopped: the order is the same, the batches before it are skipped).
  void begin_epoch(int64_t epoch, int64_t first_step = 0);
  // The next batch of the epoch; blocks until it is ready. The reference stays
  // valid until the next call to next() or begin_epoch().
  const HostBatch& next();
  // The epoch's sample order (for tests).
  const std::vector<uint32_t>& order() const { return order_; }

  // Seconds next() spent blocked waiting for the background thread.
  double wait_seconds() const { return wait_seconds_; }

 private:
  void prepare(int64_t step, HostBatch& out) const;
  void worker();

  const ImageSet& set_;
  int64_t batch_size_;
  int64_t steps_;
  bool shuffle_;
  uint64_t seed_;
  bool background_;
  std::vector<uint32_t> order_;

  HostBatch slots_[2];
  bool ready_[2] = {false, false};
  int64_t first_step_ = 0;    // where this epoch began (0, or a resumed step)
  int64_t produce_next_ = 0;  // next step the worker prepares
  int64_t consume_next_ = 0;  // next step next() returns
  uint64_t generation_ = 0;   // bumped by begin_epoch to discard stale work
  bool stop_ = false;
  bool started_ = false;
  bool busy_ = false;  // the worker is preparing a batch (reading order_)
  double wait_seconds_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
};

}  // namespace axon::data
