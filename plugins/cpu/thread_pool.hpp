// A fixed pool of threads owned by one logical CPU device. run(f) calls f(t)
// once for every t in [0, size()) (t = 0 on the calling thread) and returns
// when all are done. Work is split statically by the caller, so a given
// thread count always yields the same partition, hence bit-identical results.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace axon::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  template <class F>
  void run(F&& f) {
    run_impl(&f, [](void* obj, int t) { (*static_cast<std::remove_reference_t<F>*>(obj))(t); });
  }

  // Splits [0, n) into size() contiguous parts (some may be empty) and calls
  // f(t, begin, end) for each non-empty part on thread t. Below `serial_below`
  // items the calling thread does everything as part 0 (waking threads costs
  // microseconds).
  template <class F>
  void parallel_for(int64_t n, int64_t serial_below, F&& f) {
    if (size_ == 1 || n < serial_below) {
      if (n > 0) f(0, int64_t{0}, n);
      return;
    }
    int parts = size_;
    run([&](int t) {
      int64_t b = n * t / parts, e = n * (t + 1) / parts;
      if (b < e) f(t, b, e);
    });
  }

 private:
  using Trampoline = void (*)(void*, int);
  void run_impl(void* obj, Trampoline call);
  void worker(int t);
  void run_one(int t);

  int size_;
  std::vector<std::thread> threads_;
  std::mutex run_mu_;  // one run() at a time per device
  void* obj_ = nullptr;
  Trampoline call_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  std::mutex error_mu_;
  std::exception_ptr error_;
};

// Threads this process may run on (sched_getaffinity), at least 1.
int available_cpus();

}  // namespace axon::cpu
