#include "replica_threads.hpp"

#include <axon/error.hpp>

#include <chrono>
#include <string>
#include <system_error>

namespace axon::nn {
namespace {

using Clock = std::chrono::steady_clock;
// How long a thread polls for the next hand-over before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(500);

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Waits until `value` differs from `old`: polls for kSpin, then sleeps. The
// poll yields: on an idle core that returns at once, and on a busy machine
// it hands the core to the replica being waited for rather than burning it.
template <class T>
T await_change(const std::atomic<T>& value, T old) {
  const auto until = Clock::now() + kSpin;
  for (int i = 0;; ++i) {
    T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
    std::this_thread::yield();
    if (i % 16 == 15 && Clock::now() > until) break;
  }
  for (;;) {
    value.wait(old, std::memory_order_acquire);
    T now = value.load(std::memory_order_acquire);
    if (now != old) return now;
  }
}

}  // namespace

ReplicaThreads::ReplicaThreads(int replicas, bool caller_free)
    : replicas_(replicas < 1 ? 1 : replicas),
      first_thread_(caller_free ? 0 : 1),
      busy_(static_cast<size_t>(replicas_)),
      errors_(busy_.size()) {
  threads_.reserve(static_cast<size_t>(replicas_ - first_thread_));
  for (int r = first_thread_; r < replicas_; ++r) {
    try {
      threads_.emplace_back([this, r] { worker(r); });
    } catch (const std::system_error& e) {
      stop();  // joins the threads started, which would otherwise end the process
      throw RuntimeError("cannot start the thread of replica " + std::to_string(r) + " of " +
                         std::to_string(replicas_) + ": " + e.what());
    }
  }
}

ReplicaThreads::~ReplicaThreads() { stop(); }

void ReplicaThreads::stop() noexcept {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

void ReplicaThreads::call(int r) {
  const auto t0 = Clock::now();
  try {
    (*job_)(r);
  } catch (...) {
    errors_[static_cast<size_t>(r)] = std::current_exception();
  }
  busy_[static_cast<size_t>(r)] = since(t0);
}

void ReplicaThreads::worker(int r) {
  uint64_t seen = 0;
  for (;;) {
    seen = await_change(generation_, seen);
    if (stop_.load(std::memory_order_acquire)) return;
    // Replica 0's own thread sits out a run whose caller takes replica 0.
    if (r > 0 || !caller_takes_first_) call(r);
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) running_.notify_one();
  }
}

void ReplicaThreads::run(const std::function<void(int)>& f) {
  // Without other work the caller takes replica 0, as waiting for it costs
  // a hand-over.
  caller_takes_first_ = first_thread_ == 0;
  run(f, [this] { call(0); });
  caller_takes_first_ = false;
}

void ReplicaThreads::run(const std::function<void(int)>& f, const std::function<void()>& alongside) {
  const auto t0 = Clock::now();
  job_ = &f;
  for (auto& e : errors_) e = nullptr;
  const int threads = replicas_ - first_thread_;
  if (threads > 0) {
    running_.store(threads, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    generation_.notify_all();
  }
  std::exception_ptr alongside_error;
  try {
    alongside();
  } catch (...) {
    alongside_error = std::current_exception();
  }
  for (int left = running_.load(std::memory_order_acquire); left != 0;) left = await_change(running_, left);
  wall_ = since(t0);
  std::exception_ptr first_peer_failure;
  for (auto& e : errors_) {
    if (!e) continue;
    try {
      std::rethrow_exception(e);
    } catch (const PeerFailed&) {
      if (!first_peer_failure) first_peer_failure = e;
    }
  }
  if (alongside_error) std::rethrow_exception(alongside_error);
  if (first_peer_failure) std::rethrow_exception(first_peer_failure);
}

}  // namespace axon::nn
