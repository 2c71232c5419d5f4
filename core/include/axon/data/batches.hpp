// Batches of a SampleSource, prepared on background threads while the device
// computes the previous one. The order of each epoch is a seeded shuffle that
// depends only on (seed, epoch), so the background threads never affect what
// the model sees: results are the same with or without them. A source that
// copies from memory gets one thread and two batch slots (double buffering);
// one that decodes files (SampleSource::reader_threads) gets a thread per
// core and one slot more than threads, so memory stays a few batches.
#pragma once

#include <axon/data/sample_source.hpp>

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace axon::data {

// One batch on the host: pixels (NHWC, the source's layout) and int32 labels.
struct HostBatch {
  int64_t step = 0;  // index within the epoch
  int64_t size = 0;  // samples; the last batch of an epoch may be short
  PixelFormat format = PixelFormat::kUint8;
  std::vector<uint8_t> images;  // size samples of the source's layout().bytes()
  std::vector<int32_t> labels;
};

class BatchPipeline {
 public:
  // `source` must outlive the pipeline. batch_size > 0.
  BatchPipeline(const SampleSource& source, int64_t batch_size, bool shuffle, uint64_t seed, bool background = true);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  int64_t steps() const { return steps_; }  // ceil(count / batch_size)
  int64_t batch_size() const { return batch_size_; }
  int64_t count() const { return count_; }
  // The size of the batch at `step` (batch_size, or the remainder for the last).
  int64_t size_of(int64_t step) const;
  // Background threads preparing batches (0 without background).
  int threads() const { return static_cast<int>(threads_.size()); }

  // Starts an epoch (abandoning any batches left of the previous one) and
  // begins preparing its batch `first_step` (0, or where a resumed epoch
  // stopped: the order is the same, the batches before it are skipped).
  void begin_epoch(int64_t epoch, int64_t first_step = 0);
  // The next batch of the epoch; blocks until it is ready. The reference stays
  // valid until the next call to next() or begin_epoch(). A sample that could
  // not be read (a corrupt file) is thrown here, as the source threw it.
  const HostBatch& next();
  // The epoch's sample order (for tests).
  const std::vector<uint32_t>& order() const { return order_; }

  // Seconds next() spent blocked waiting for the background threads.
  double wait_seconds() const { return wait_seconds_; }

 private:
  enum class Slot { kFree, kFilling, kReady, kHeld };
  void prepare(int64_t step, HostBatch& out) const;
  void worker();

  const SampleSource& source_;
  int64_t count_;
  int64_t batch_size_;
  int64_t steps_;
  bool shuffle_;
  uint64_t seed_;
  bool background_;
  std::vector<uint32_t> order_;

  // Slot k holds the steps equal to k modulo the slot count.
  std::vector<HostBatch> slots_;
  std::vector<Slot> state_;
  std::vector<std::exception_ptr> errors_;  // per slot: what preparing it threw
  int held_ = -1;             // the slot next() returned last
  int64_t produce_next_ = 0;  // next step a worker prepares
  int64_t consume_next_ = 0;  // next step next() returns
  int busy_ = 0;              // workers preparing a batch (reading order_)
  bool stop_ = false;
  bool started_ = false;
  double wait_seconds_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
};

}  // namespace axon::data
