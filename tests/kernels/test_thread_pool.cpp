// The CPU plugin's thread pool (plugins/cpu/thread_pool.hpp), compiled in
// directly: every chunk runs exactly once for any thread and chunk count,
// each thread starts on its own run of chunks in order, and a thread that
// stalls has the rest of its run taken by the others, from the run's end.
#include "thread_pool.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using axon::cpu::ThreadPool;

namespace {

// Which thread ran each chunk, and each thread's chunks in the order it ran
// them. Catch's assertions are not thread-safe: a chunk only records (a
// thread or chunk out of range is counted as such) and the test checks after.
struct Record {
  std::mutex mu;
  std::vector<int> runs;                     // per chunk: how often it ran
  std::vector<std::vector<int64_t>> by;      // per thread: its chunks, in order
  int out_of_range = 0;                      // calls with a bad thread or chunk
  Record(int64_t chunks, int threads) : runs(static_cast<size_t>(chunks)), by(static_cast<size_t>(threads)) {}
  void add(int t, int64_t c) {
    std::lock_guard<std::mutex> lock(mu);
    if (t < 0 || t >= static_cast<int>(by.size()) || c < 0 || c >= static_cast<int64_t>(runs.size())) {
      ++out_of_range;
      return;
    }
    ++runs[static_cast<size_t>(c)];
    by[static_cast<size_t>(t)].push_back(c);
  }
};

// Run r's chunks, as the pool cuts them.
int64_t run_begin(int64_t chunks, int threads, int r) { return chunks * r / threads; }

}  // namespace

TEST_CASE("the CPU thread pool runs every chunk exactly once, on a valid thread", "[thread_pool][cpu]") {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    REQUIRE(pool.size() == threads);
    for (int64_t chunks : {0, 1, 2, 3, 4, 7, 64, 1000}) {
      for (int repeat = 0; repeat < 3; ++repeat) {
        Record rec(chunks, threads);
        pool.for_chunks(chunks, true, [&](int t, int64_t c) { rec.add(t, c); });
        INFO("threads " << threads << ", chunks " << chunks);
        REQUIRE(rec.out_of_range == 0);
        for (int64_t c = 0; c < chunks; ++c) REQUIRE(rec.runs[static_cast<size_t>(c)] == 1);
      }
    }
  }
}

TEST_CASE("the CPU thread pool's threads take their own runs in order and the others' from the end",
          "[thread_pool][cpu]") {
  // Thread 0 (the caller) is slowed, so the others finish their own runs and
  // take from run 0: the chunks thread 0 ran of run 0 must be its first ones,
  // in order, and those the others took its last ones.
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    const int64_t chunks = 12 * threads;
    Record rec(chunks, threads);
    pool.for_chunks(chunks, true, [&](int t, int64_t c) {
      if (t == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      rec.add(t, c);
    });
    INFO("threads " << threads);
    for (int64_t c = 0; c < chunks; ++c) REQUIRE(rec.runs[static_cast<size_t>(c)] == 1);
    const int64_t end0 = run_begin(chunks, threads, 1);
    std::vector<int64_t> own;
    for (int64_t c : rec.by[0])
      if (c < end0) own.push_back(c);
    // An owner's chunks: a prefix of its run, in the order taken.
    for (size_t i = 0; i < own.size(); ++i) REQUIRE(own[i] == static_cast<int64_t>(i));
    // The rest of run 0 went to the others, who reached it (thread 0 sleeps
    // 10 ms a chunk: 120 ms for its own run alone), each taking it from the
    // end down.
    REQUIRE(static_cast<int64_t>(own.size()) < end0);
    std::vector<int64_t> taken;
    for (int t = 1; t < threads; ++t) {
      std::vector<int64_t> mine;
      for (int64_t c : rec.by[static_cast<size_t>(t)])
        if (c < end0) mine.push_back(c);
      for (size_t i = 1; i < mine.size(); ++i) REQUIRE(mine[i] < mine[i - 1]);
      taken.insert(taken.end(), mine.begin(), mine.end());
    }
    std::sort(taken.begin(), taken.end());
    REQUIRE(static_cast<int64_t>(own.size() + taken.size()) == end0);
    for (size_t i = 0; i < taken.size(); ++i) REQUIRE(taken[i] == static_cast<int64_t>(own.size() + i));
    // A thread that began in its own run began at its first chunk (one that
    // woke late may find its run taken and begin in another's).
    for (int t = 1; t < threads; ++t) {
      if (rec.by[static_cast<size_t>(t)].empty()) continue;
      const int64_t first = rec.by[static_cast<size_t>(t)].front();
      if (first >= run_begin(chunks, threads, t) && first < run_begin(chunks, threads, t + 1))
        REQUIRE(first == run_begin(chunks, threads, t));
    }
  }
}

TEST_CASE("the CPU thread pool's backward ranges are for_ranges' ranges, each run taken from its end",
          "[thread_pool][cpu]") {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 5, 64, 1001})
      for (int64_t chunk : {1, 3, 64})
        for (bool parallel : {true, false}) {
          const int64_t chunks = (n + chunk - 1) / chunk;
          Record rec(chunks, threads);
          std::atomic<int> bad_range{0};
          pool.for_ranges_backward(n, chunk, parallel, [&](int t, int64_t b, int64_t e) {
            if (b % chunk != 0 || e != std::min(n, b + chunk)) ++bad_range;
            rec.add(t, b / chunk);
          });
          INFO("threads " << threads << ", n " << n << ", chunk " << chunk << (parallel ? "" : ", serial"));
          REQUIRE(bad_range == 0);
          REQUIRE(rec.out_of_range == 0);
          for (int64_t c = 0; c < chunks; ++c) REQUIRE(rec.runs[static_cast<size_t>(c)] == 1);
          if (!parallel || chunks < 2) {
            // One thread, the caller: every chunk from the last down.
            REQUIRE(static_cast<int64_t>(rec.by[0].size()) == chunks);
            for (int64_t i = 0; i < chunks; ++i) REQUIRE(rec.by[0][static_cast<size_t>(i)] == chunks - 1 - i);
            continue;
          }
          // A thread that began in its own run began at the run's last chunk.
          for (int t = 0; t < threads; ++t) {
            if (rec.by[static_cast<size_t>(t)].empty()) continue;
            const int64_t first = rec.by[static_cast<size_t>(t)].front();
            const int64_t begin = run_begin(chunks, threads, t), end = run_begin(chunks, threads, t + 1);
            if (first >= begin && first < end) REQUIRE(first == end - 1);
          }
        }
  }
}

TEST_CASE("the CPU thread pool's tapered ranges cover the items once, each thread owning an even share of them",
          "[thread_pool][cpu]") {
  // Tapered chunks shrink at the end, so an even split of the chunks would
  // give thread 0 more than its share of the items; the runs begin at the
  // chunks holding items n t / threads instead, as for_ranges' do (an op's
  // output rows then stay on the core the next op reads them on).
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {7, 100, 1001})
      for (int64_t chunk : {1, 4, 16}) {
        const ThreadPool::Taper tp(n, chunk);
        Record rec(tp.count, threads);
        std::vector<int> covered(static_cast<size_t>(n));
        std::atomic<int> bad{0};
        pool.for_tapered_ranges(n, chunk, true, [&](int t, int64_t c, int64_t b, int64_t e) {
          int64_t cb, ce;
          tp.range(c, cb, ce);
          if (b != cb || e != ce || b >= e || e > n) ++bad;
          for (int64_t i = b; i < e && i < n; ++i) ++covered[static_cast<size_t>(i)];  // chunks never overlap
          if (t == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the others start in their runs
          rec.add(t, c);
        });
        INFO("threads " << threads << ", n " << n << ", chunk " << chunk);
        REQUIRE(bad == 0);
        REQUIRE(rec.out_of_range == 0);
        for (int v : covered) REQUIRE(v == 1);
        for (int t = 1; t < threads; ++t) {
          if (rec.by[static_cast<size_t>(t)].empty()) continue;
          const int64_t begin = tp.chunk_of(n * t / threads);
          const int64_t end = t + 1 == threads ? tp.count : tp.chunk_of(n * (t + 1) / threads);
          const int64_t first = rec.by[static_cast<size_t>(t)].front();
          if (first >= begin && first < end) REQUIRE(first == begin);
        }
        // Thread 0's own chunks: a prefix of the chunks before item n / threads.
        const int64_t end0 = tp.chunk_of(n / threads);
        std::vector<int64_t> own;
        for (int64_t c : rec.by[0])
          if (c < end0) own.push_back(c);
        for (size_t i = 0; i < own.size(); ++i) REQUIRE(own[i] == static_cast<int64_t>(i));
        for (int t = 1; t < threads; ++t)
          for (int64_t c : rec.by[static_cast<size_t>(t)])
            if (c < end0) REQUIRE(c >= static_cast<int64_t>(own.size()));  // taken from run 0's end
      }
  }
}

TEST_CASE("the CPU thread pool finishes a job whose worker stalls, and reports a chunk's exception",
          "[thread_pool][cpu]") {
  ThreadPool pool(2);
  const int64_t chunks = 40;
  Record rec(chunks, 2);
  // The worker sleeps on its first chunk: the caller takes the rest of the
  // worker's run from its end meanwhile.
  pool.for_chunks(chunks, true, [&](int t, int64_t c) {
    if (t == 1 && rec.by[1].empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rec.add(t, c);
  });
  for (int64_t c = 0; c < chunks; ++c) REQUIRE(rec.runs[static_cast<size_t>(c)] == 1);
  REQUIRE(rec.by[0].size() >= static_cast<size_t>(chunks - 1));
  // Taken from the end of run 1: the caller's chunks of it count down.
  std::vector<int64_t> stolen;
  for (int64_t c : rec.by[0])
    if (c >= chunks / 2) stolen.push_back(c);
  REQUIRE_FALSE(stolen.empty());
  for (size_t i = 0; i < stolen.size(); ++i) REQUIRE(stolen[i] == chunks - 1 - static_cast<int64_t>(i));

  std::atomic<int> ran{0};
  REQUIRE_THROWS_AS(pool.for_chunks(chunks, true,
                                    [&](int, int64_t c) {
                                      ran.fetch_add(1);
                                      if (c == 7) throw std::runtime_error("chunk 7");
                                    }),
                    std::runtime_error);
  REQUIRE(ran.load() == chunks);  // the other chunks still ran
  // The pool works after an exception.
  Record again(chunks, 2);
  pool.for_chunks(chunks, true, [&](int t, int64_t c) { again.add(t, c); });
  for (int64_t c = 0; c < chunks; ++c) REQUIRE(again.runs[static_cast<size_t>(c)] == 1);
}

// Between jobs, a passive pool's threads sleep instead of spinning: over 100
// small jobs 2 ms apart an active pool's other thread spins about 300 us
// after each (some 30 ms of CPU in all), a passive one's wakes, runs its
// chunks and sleeps again (well under 10 ms). CPU time, not wall time, so a
// busy machine does not make it fail.
TEST_CASE("a passive CPU thread pool's idle threads sleep at once", "[thread_pool][cpu]") {
  const auto cpu_ms = [](clockid_t clock) {
    timespec ts{};
    clock_gettime(clock, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  };
  ThreadPool pool(2, ThreadPool::Wait::passive);
  std::atomic<int64_t> ran{0};
  const double process0 = cpu_ms(CLOCK_PROCESS_CPUTIME_ID), caller0 = cpu_ms(CLOCK_THREAD_CPUTIME_ID);
  for (int job = 0; job < 100; ++job) {
    pool.for_chunks(8, true, [&](int, int64_t) { ran.fetch_add(1, std::memory_order_relaxed); });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const double others = (cpu_ms(CLOCK_PROCESS_CPUTIME_ID) - process0) - (cpu_ms(CLOCK_THREAD_CPUTIME_ID) - caller0);
  REQUIRE(ran == 800);
  INFO("CPU time of the threads other than the caller: " << others << " ms");
  CHECK(others < 10.0);
}
