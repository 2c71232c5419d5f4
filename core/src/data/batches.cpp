// Double-buffered batch preparation. The worker fills slot (step % 2) when the
// consumer has released it; next() waits for its slot and releases the other.
#include <axon/data/batches.hpp>
#include <axon/error.hpp>
#include <axon/nn/random.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <system_error>
#include <cstring>
#include <numeric>

namespace axon::data {

BatchPipeline::BatchPipeline(const ImageSet& set, int64_t batch_size, bool shuffle, uint64_t seed, bool background)
    : set_(set), batch_size_(batch_size), shuffle_(shuffle), seed_(seed), background_(background) {
  if (batch_size <= 0) throw UsageError("batch size must be positive, got " + std::to_string(batch_size));
  // Written so that no batch size overflows: a batch never holds more than the set.
  steps_ = set.count / batch_size + (set.count % batch_size != 0 ? 1 : 0);
  order_.resize(static_cast<size_t>(set.count));
  std::iota(order_.begin(), order_.end(), 0u);
  const int64_t largest = std::min(batch_size, set.count);
  for (HostBatch& s : slots_) {
    s.images.reserve(static_cast<size_t>(largest * set.image_bytes()));
    s.labels.reserve(static_cast<size_t>(largest));
  }
  if (background_) {
    try {
      thread_ = std::thread([this] { worker(); });
    } catch (const std::system_error& e) {
      throw RuntimeError(std::string("cannot start the thread that prepares batches: ") + e.what() +
                         " (--no-prefetch prepares them on the training thread)");
    }
  }
}

BatchPipeline::~BatchPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t BatchPipeline::size_of(int64_t step) const {
  return std::min(batch_size_, set_.count - step * batch_size_);
}

void BatchPipeline::prepare(int64_t step, HostBatch& out) const {
  const int64_t n = size_of(step);
  const auto bytes = static_cast<size_t>(set_.image_bytes());
  out.step = step;
  out.size = n;
  out.images.resize(static_cast<size_t>(n) * bytes);
  out.labels.resize(static_cast<size_t>(n));
  const uint32_t* idx = order_.data() + step * batch_size_;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out.images.data() + static_cast<size_t>(i) * bytes, set_.images.data() + size_t{idx[i]} * bytes, bytes);
    out.labels[static_cast<size_t>(i)] = set_.labels[idx[i]];
  }
}

void BatchPipeline::begin_epoch(int64_t epoch, int64_t first_step) {
  if (first_step < 0 || first_step > steps_)
    throw RuntimeError("BatchPipeline::begin_epoch: step " + std::to_string(first_step) + " of an epoch of " +
                       std::to_string(steps_));
  std::unique_lock<std::mutex> lock(mu_);
  // The worker reads order_ while preparing: let it finish first.
  cv_.wait(lock, [&] { return !busy_; });
  std::iota(order_.begin(), order_.end(), 0u);
  if (shuffle_) nn::Rng::derive(seed_, static_cast<uint64_t>(epoch)).shuffle(order_);
  ++generation_;
  first_step_ = first_step;
  produce_next_ = first_step;
  consume_next_ = first_step;
  ready_[0] = ready_[1] = false;
  started_ = true;
  lock.unlock();
  cv_.notify_all();
}

void BatchPipeline::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || (started_ && produce_next_ < steps_ && !ready_[produce_next_ % 2] &&
                                          produce_next_ <= consume_next_ + 1); });
    if (stop_) return;
    const int64_t step = produce_next_;
    const uint64_t gen = generation_;
    HostBatch& slot = slots_[step % 2];
    busy_ = true;
    lock.unlock();
    prepare(step, slot);
    lock.lock();
    busy_ = false;
    cv_.notify_all();
    if (gen != generation_) continue;  // an epoch began meanwhile: this batch is stale
    ready_[step % 2] = true;
    ++produce_next_;
    cv_.notify_all();
  }
}

const HostBatch& BatchPipeline::next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_ || consume_next_ >= steps_) throw RuntimeError("BatchPipeline::next: no batch left in this epoch");
  const int64_t step = consume_next_;
  const int slot = static_cast<int>(step % 2);
  // The batch returned last time is no longer in use: free its slot (at
  // the epoch's first step the other slot may already hold the next batch).
  if (step > first_step_) ready_[1 - slot] = false;
  ++consume_next_;
  if (!background_) {
    lock.unlock();
    prepare(step, slots_[slot]);
    return slots_[slot];
  }
  cv_.notify_all();
  if (!ready_[slot]) {
    auto t0 = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] { return ready_[slot]; });
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return slots_[slot];
}

}  // namespace axon::data
