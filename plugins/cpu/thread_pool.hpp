// A fixed pool of threads owned by one logical CPU device.
//
// Work is cut into chunks whose boundaries depend only on the problem size,
// never on the thread count, and reductions keep one partial per chunk,
// added in chunk order. So a result is bit-identical run to run, whatever the
// thread count or which thread ran a chunk.
//
// Thread t owns the t-th of size() equal runs of a job's chunks and takes
// them in order; then it takes the chunks left in the other runs, from their
// ends. A thread the OS has descheduled never stalls an op (the others,
// the caller included, take its share), and where the threads keep pace each
// one works on the same part of every tensor, op after op and step after
// step, so that part stays in its core's caches. (The guide's CNN on 2
// shared cores, where one shared counter handed out the chunks: 12,400-12,700
// -> 15,400-17,200 samples/s while a neighbour loaded the machine.)
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace axon::cpu {

class ThreadPool {
 public:
  // How an idle thread waits for the next job: active spins for a while
  // first (a training step issues ops back to back, and a futex wake-up
  // costs more than a spin); passive sleeps at once, leaving the core to
  // other processes (OMP_WAIT_POLICY's choice; AXON_CPU_WAIT).
  enum class Wait { active, passive };
  // AXON_CPU_WAIT=active|passive (core's Config refuses other values).
  static Wait wait_from_environment();

  explicit ThreadPool(int threads, Wait wait = Wait::active);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  // The chunks of for_tapered_ranges (below).
  struct Taper {
    int64_t n, chunk, full, small, count;
    Taper(int64_t n_, int64_t chunk_) : n(n_), chunk(chunk_) {
      full = n > 4 * chunk ? (n - 4 * chunk) / chunk : 0;  // full-size chunks first
      small = std::max<int64_t>(1, chunk / 4);
      count = full + (n - full * chunk + small - 1) / small;
    }
    // The chunk holding item i.
    int64_t chunk_of(int64_t i) const { return i < full * chunk ? i / chunk : full + (i - full * chunk) / small; }
    void range(int64_t c, int64_t& b, int64_t& e) const {
      b = c < full ? c * chunk : full * chunk + (c - full) * small;
      e = std::min(n, c < full ? b + chunk : b + small);
    }
  };

  // Calls f(t, chunk) once for every chunk in [0, chunks); t in [0, size())
  // names the executing thread (0 = the caller) for per-thread scratch. With
  // parallel == false (small work: waking threads costs microseconds) the
  // caller runs every chunk itself, in order. split: for_tapered_ranges'
  // chunks, whose runs then split the items evenly (run(), below).
  template <class F>
  void for_chunks(int64_t chunks, bool parallel, F&& f, const Taper* split = nullptr) {
    if (chunks <= 0) return;
    if (!parallel || size_ == 1 || chunks == 1) {
      for (int64_t c = 0; c < chunks; ++c) f(0, c);
      return;
    }
    run(chunks, &f, [](void* obj, int t, int64_t c) { (*static_cast<std::remove_reference_t<F>*>(obj))(t, c); },
        split);
  }

  // f(t, begin, end) for consecutive ranges of `chunk` items covering [0, n).
  template <class F>
  void for_ranges(int64_t n, int64_t chunk, bool parallel, F&& f) {
    for_chunks((n + chunk - 1) / chunk, parallel, [&](int t, int64_t c) {
      const int64_t b = c * chunk;
      f(t, b, n - b < chunk ? n : b + chunk);
    });
  }

  // Like for_ranges, but each thread takes its own run of chunks from the
  // back: a second pass over what the same thread just swept meets the
  // rows it touched last, still in its core's caches, first.
  template <class F>
  void for_ranges_backward(int64_t n, int64_t chunk, bool parallel, F&& f) {
    const int64_t count = (n + chunk - 1) / chunk;
    const int64_t threads = parallel && count > 1 ? size_ : 1;
    for_chunks(count, parallel, [&](int t, int64_t c) {
      const int64_t r = ((c + 1) * threads - 1) / count;  // the run holding c: run_begin(r) <= c < run_begin(r + 1)
      const int64_t mirrored = run_begin(count, threads, r) + run_begin(count, threads, r + 1) - 1 - c;
      const int64_t b = mirrored * chunk;
      f(t, b, n - b < chunk ? n : b + chunk);
    });
  }

  // Like for_ranges, but the last 4 chunks' worth of items go in quarter-size
  // chunks, so threads finish together (an op waits for its slowest thread);
  // f(t, index, begin, end). Boundaries still depend on n and chunk only.
  template <class F>
  void for_tapered_ranges(int64_t n, int64_t chunk, bool parallel, F&& f) {
    const Taper tp(n, chunk);
    for_chunks(
        tp.count, parallel,
        [&](int t, int64_t c) {
          int64_t b, e;
          tp.range(c, b, e);
          f(t, c, b, e);
        },
        &tp);
  }

 private:
  // The first of run r's chunks when `chunks` go to `threads` runs.
  static int64_t run_begin(int64_t chunks, int64_t threads, int64_t r) { return chunks * r / threads; }
  using Trampoline = void (*)(void*, int, int64_t);
  // split: runs that begin at the chunks holding items n t / threads, so
  // that each thread owns the same share of the items (and of the memory)
  // as under for_ranges, whatever the chunks' sizes.
  void run(int64_t chunks, void* obj, Trampoline call, const Taper* split);
  void work(int t);  // takes chunks until none are left
  void worker(int t);
  void stop_threads() noexcept;  // joins every started thread

  static constexpr uint32_t kOpen = 1u << 31;  // job open for joining; low bits: threads inside

  int size_;
  std::chrono::microseconds spin_;  // how long an idle thread spins before sleeping
  std::vector<std::thread> threads_;
  std::mutex run_mu_;  // one job at a time per device
  void* obj_ = nullptr;
  Trampoline call_ = nullptr;
  // Chunks [begin, end) of one thread's run: taken counts chunks handed out
  // (by the owner from the front, by the others from the back).
  struct alignas(64) Run {
    std::atomic<int64_t> taken{0}, front{0}, back{0};
    int64_t begin = 0, end = 0;
  };
  std::vector<Run> runs_;
  // The next chunk of run r, from its front (its owner) or its back; -1 once
  // every chunk of it is handed out.
  int64_t take(Run& r, bool from_front);
  std::atomic<uint32_t> state_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::mutex error_mu_;
  std::exception_ptr error_;
};

// Threads this process may run on (sched_getaffinity), at least 1.
int available_cpus();

// Chunks of at most `chunk` items covering [0, n).
inline int64_t chunk_count(int64_t n, int64_t chunk) { return n <= 0 ? 0 : (n + chunk - 1) / chunk; }

}  // namespace axon::cpu
