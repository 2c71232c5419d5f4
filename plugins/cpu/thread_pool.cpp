#include "thread_pool.hpp"

#include <axon/plugin.hpp>

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define AXON_CPU_RELAX() _mm_pause()
#else
#define AXON_CPU_RELAX() std::this_thread::yield()
#endif

namespace axon::cpu {

namespace {
// Under Wait::active idle threads spin this long for the next job before
// sleeping. With two trainings of 2 threads each on 2 cores, passive waits
// ended the pair 20% sooner (2.79 -> 2.28 s, 3 alternated pairs); one alone
// ran within noise of active.
constexpr auto kSpin = std::chrono::microseconds(300);
}  // namespace

ThreadPool::Wait ThreadPool::wait_from_environment() {
  const char* v = std::getenv("AXON_CPU_WAIT");
  return v != nullptr && std::string_view(v) == "passive" ? Wait::passive : Wait::active;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int threads, Wait wait)
    : size_(threads < 1 ? 1 : threads),
      spin_(wait == Wait::active ? kSpin : std::chrono::microseconds(0)),
      runs_(static_cast<size_t>(size_)) {
  threads_.reserve(static_cast<size_t>(size_ - 1));
  for (int t = 1; t < size_; ++t) {
    try {
      threads_.emplace_back([this, t] { worker(t); });
    } catch (const std::system_error& e) {
      // Out of threads (ulimit -u, a cgroup's pids.max): stop the ones
      // started, or their destructors would terminate the process.
      stop_threads();
      sdk::fail(AXON_OUT_OF_MEMORY, "cannot start thread " + std::to_string(t + 1) + " of " + std::to_string(size_) +
                                        " (" + e.what() + "); use fewer threads (--threads)");
    }
  }
}

ThreadPool::~ThreadPool() { stop_threads(); }

void ThreadPool::stop_threads() noexcept {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (auto& th : threads_) th.join();
  threads_.clear();
}

int64_t ThreadPool::take(Run& r, bool from_front) {
  // A ticket below the run's size is a chunk nobody else holds: the owner's
  // tickets count up from begin, the others' down from end, and the tickets
  // in all never exceed the chunks.
  if (r.taken.fetch_add(1, std::memory_order_relaxed) >= r.end - r.begin) return -1;
  return from_front ? r.begin + r.front.fetch_add(1, std::memory_order_relaxed)
                    : r.end - 1 - r.back.fetch_add(1, std::memory_order_relaxed);
}

void ThreadPool::work(int t) {
  const int n = size_;
  for (int i = 0; i < n; ++i) {
    Run& r = runs_[static_cast<size_t>((t + i) % n)];
    for (int64_t c; (c = take(r, i == 0)) >= 0;) {
      try {
        call_(obj_, t, c);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
  }
}

void ThreadPool::run(int64_t chunks, void* obj, Trampoline call, const Taper* split) {
  std::lock_guard<std::mutex> lock(run_mu_);
  obj_ = obj;
  call_ = call;
  error_ = nullptr;
  // Run t's first chunk (the last run ends at `chunks`).
  auto start = [&](int t) {
    if (t == size_) return chunks;
    return split != nullptr ? split->chunk_of(split->n * t / size_) : run_begin(chunks, size_, t);
  };
  for (int t = 0; t < size_; ++t) {
    Run& r = runs_[static_cast<size_t>(t)];
    r.begin = start(t);
    r.end = start(t + 1);
    r.taken.store(0, std::memory_order_relaxed);
    r.front.store(0, std::memory_order_relaxed);
    r.back.store(0, std::memory_order_relaxed);
  }
  state_.store(kOpen, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  work(0);
  // Close the job: no thread may join from now on; wait for those inside.
  state_.fetch_and(~kOpen, std::memory_order_acq_rel);
  // Usually the other threads are finishing their last chunk on other cores:
  // spin. Yield (a syscall, microseconds) only once that has taken long,
  // i.e. a joined thread was descheduled and may need our core.
  int spins = 0;
  auto yield_after = std::chrono::steady_clock::time_point::max();
  while ((state_.load(std::memory_order_acquire) & ~kOpen) != 0) {
    AXON_CPU_RELAX();
    if (++spins % 256 != 0) continue;
    const auto now = std::chrono::steady_clock::now();
    if (yield_after == std::chrono::steady_clock::time_point::max())
      yield_after = now + spin_;
    else if (now > yield_after)
      std::this_thread::yield();
  }
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker(int t) {
  uint64_t seen = 0;
  for (;;) {
    const auto spin_until = std::chrono::steady_clock::now() + spin_;
    uint64_t g;
    int polls = 0;
    while ((g = generation_.load(std::memory_order_acquire)) == seen) {
      AXON_CPU_RELAX();
      if (++polls % 64 == 0 && std::chrono::steady_clock::now() > spin_until) generation_.wait(seen, std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load()) return;
    // Join the job only while it is open (the caller may have finished it).
    uint32_t s = state_.load(std::memory_order_acquire);
    bool joined = false;
    while ((s & kOpen) != 0 && !joined)
      joined = state_.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel, std::memory_order_acquire);
    if (!joined) continue;
    work(t);
    state_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace axon::cpu
