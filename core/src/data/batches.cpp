// Batch preparation ahead of the consumer. Workers claim steps in order and
// fill slot (step % slots); next() waits for its slot and frees the one it
// returned before. A slot is free, being filled, ready, or held by the
// consumer, so at most slots - 1 batches are prepared ahead.
#include <axon/data/batches.hpp>
#include <axon/error.hpp>
#include <axon/nn/random.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <string>
#include <system_error>

namespace axon::data {

BatchPipeline::BatchPipeline(const SampleSource& source, int64_t batch_size, bool shuffle, uint64_t seed,
                             bool background)
    : source_(source), count_(source.size()), batch_size_(batch_size), shuffle_(shuffle), seed_(seed),
      background_(background) {
  if (batch_size <= 0) throw UsageError("batch size must be positive, got " + std::to_string(batch_size));
  // Written so that no batch size overflows: a batch never holds more than the set.
  steps_ = count_ / batch_size + (count_ % batch_size != 0 ? 1 : 0);
  order_.resize(static_cast<size_t>(count_));
  std::iota(order_.begin(), order_.end(), 0u);
  // More threads than batches in an epoch would only wait.
  const int threads = background ? static_cast<int>(std::clamp<int64_t>(source.reader_threads(), 1,
                                                                        std::max<int64_t>(steps_, 1)))
                                 : 0;
  const size_t slots = background ? static_cast<size_t>(threads) + 1 : 1;
  slots_.resize(slots);
  state_.assign(slots, Slot::kFree);
  errors_.resize(slots);
  const int64_t largest = std::min(batch_size, count_);
  for (HostBatch& s : slots_) {
    s.format = source.layout().format;
    s.images.reserve(static_cast<size_t>(largest * source.layout().bytes()));
    s.labels.reserve(static_cast<size_t>(largest));
  }
  try {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { worker(); });
  } catch (const std::system_error& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
    throw RuntimeError(std::string("cannot start the thread that prepares batches: ") + e.what() +
                       " (--no-prefetch prepares them on the training thread)");
  }
}

BatchPipeline::~BatchPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int64_t BatchPipeline::size_of(int64_t step) const { return std::min(batch_size_, count_ - step * batch_size_); }

void BatchPipeline::prepare(int64_t step, HostBatch& out) const {
  const int64_t n = size_of(step);
  const auto bytes = static_cast<size_t>(source_.layout().bytes());
  out.step = step;
  out.size = n;
  out.images.resize(static_cast<size_t>(n) * bytes);
  out.labels.resize(static_cast<size_t>(n));
  const uint32_t* idx = order_.data() + step * batch_size_;
  for (int64_t i = 0; i < n; ++i) {
    source_.read(idx[i], out.images.data() + static_cast<size_t>(i) * bytes);
    out.labels[static_cast<size_t>(i)] = source_.label(idx[i]);
  }
}

void BatchPipeline::begin_epoch(int64_t epoch, int64_t first_step) {
  if (first_step < 0 || first_step > steps_)
    throw RuntimeError("BatchPipeline::begin_epoch: step " + std::to_string(first_step) + " of an epoch of " +
                       std::to_string(steps_));
  std::unique_lock<std::mutex> lock(mu_);
  // The workers read order_ while preparing: let them finish first.
  cv_.wait(lock, [&] { return busy_ == 0; });
  std::iota(order_.begin(), order_.end(), 0u);
  if (shuffle_) nn::Rng::derive(seed_, static_cast<uint64_t>(epoch)).shuffle(order_);
  produce_next_ = first_step;
  consume_next_ = first_step;
  std::fill(state_.begin(), state_.end(), Slot::kFree);
  std::fill(errors_.begin(), errors_.end(), nullptr);
  held_ = -1;
  started_ = true;
  lock.unlock();
  cv_.notify_all();
}

void BatchPipeline::worker() {
  const size_t slots = slots_.size();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] {
      return stop_ || (started_ && produce_next_ < steps_ && state_[static_cast<size_t>(produce_next_) % slots] == Slot::kFree);
    });
    if (stop_) return;
    const int64_t step = produce_next_++;
    const size_t slot = static_cast<size_t>(step) % slots;
    state_[slot] = Slot::kFilling;
    ++busy_;
    lock.unlock();
    std::exception_ptr error;
    try {
      prepare(step, slots_[slot]);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    --busy_;
    errors_[slot] = error;
    state_[slot] = Slot::kReady;
    cv_.notify_all();
  }
}

const HostBatch& BatchPipeline::next() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!started_ || consume_next_ >= steps_) throw RuntimeError("BatchPipeline::next: no batch left in this epoch");
  const int64_t step = consume_next_++;
  const size_t slot = static_cast<size_t>(step) % slots_.size();
  // The batch returned last time is no longer in use: free its slot.
  if (held_ >= 0) state_[static_cast<size_t>(held_)] = Slot::kFree;
  held_ = -1;
  if (!background_) {
    lock.unlock();
    prepare(step, slots_[slot]);
    return slots_[slot];
  }
  cv_.notify_all();
  if (state_[slot] != Slot::kReady) {
    auto t0 = std::chrono::steady_clock::now();
    cv_.wait(lock, [&] { return state_[slot] == Slot::kReady; });
    wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state_[slot] = Slot::kHeld;
  held_ = static_cast<int>(slot);
  if (errors_[slot]) std::rethrow_exception(errors_[slot]);
  return slots_[slot];
}

}  // namespace axon::data
