// The buckets of the overlapped all-reduce (core/src/nn/gradient_buckets.hpp):
// their layout over the gradient buffer, and the progress the reducing
// thread waits on.
#include "gradient_buckets.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

using namespace axon::nn;

TEST_CASE("gradient buckets cover the buffer from its end, each from a weight, at least the cap but the last",
          "[buckets]") {
  // Weights at 0, 64, 128, 1088, 1152 written by plan steps 0, 0, 2, 5, 5;
  // 1300 floats in all (the metric sums after the last weight).
  const std::vector<GradientSegment> w{{0, 0}, {64, 0}, {128, 2}, {1088, 5}, {1152, 5}};
  const std::vector<GradientBucket> b = gradient_buckets(w, 1300, 200);
  REQUIRE(b.size() == 3);
  CHECK((b[0].begin == 1088 && b[0].end == 1300 && b[0].last_step == 5));  // 148 floats from 1152: too few
  CHECK((b[1].begin == 128 && b[1].end == 1088 && b[1].last_step == 2));
  CHECK((b[2].begin == 0 && b[2].end == 128 && b[2].last_step == 0));  // smaller: the buffer's start
  // A cap of one float: a bucket per weight, the metric sums with the last.
  const std::vector<GradientBucket> each = gradient_buckets(w, 1300, 1);
  REQUIRE(each.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(each[i].begin == w[4 - i].begin);
    CHECK(each[i].end == (i == 0 ? 1300 : w[5 - i].begin));
    CHECK(each[i].last_step == w[4 - i].step);
  }
  // No cap, or no weights: one bucket, the whole buffer.
  CHECK(gradient_buckets(w, 1300, 0).size() == 1);
  const std::vector<GradientBucket> none = gradient_buckets({}, 70, 1);
  REQUIRE(none.size() == 1);
  CHECK((none[0].begin == 0 && none[0].end == 70));
  // Weights out of buffer order are an internal error, not a wrong layout.
  CHECK_THROWS(gradient_buckets({{64, 0}, {0, 1}}, 128, 1));
  // Steps out of buffer order (the plan runs the readers of one tensor
  // together): a bucket is complete at the earliest step of its weights.
  const std::vector<GradientSegment> moved{{0, 0}, {64, 4}, {128, 2}, {1088, 5}, {1152, 3}};
  const std::vector<GradientBucket> m = gradient_buckets(moved, 1300, 200);
  REQUIRE(m.size() == 3);
  CHECK((m[0].begin == 1088 && m[0].end == 1300 && m[0].last_step == 3));
  CHECK((m[1].begin == 128 && m[1].end == 1088 && m[1].last_step == 2));
  CHECK((m[2].begin == 0 && m[2].end == 128 && m[2].last_step == 0));
}

TEST_CASE("a bucket is ready once every replica's backward has passed its last step", "[buckets]") {
  BucketProgress p({{1088, 1300, 5}, {128, 1088, 2}, {0, 128, 0}}, 2);
  p.reset();
  p.backward_ran(0, 5);
  p.backward_ran(1, 6);  // a step after the bucket's: not yet
  bool ready = false;
  std::thread waiter([&] { ready = p.wait(0); });
  p.backward_ran(1, 5);
  waiter.join();
  CHECK(ready);
  // Replica 0 jumps past two buckets; replica 1 finishes without samples.
  p.backward_ran(0, 0);
  p.finished(1);
  CHECK(p.wait(2));
  // A failed replica releases the waiter, which then reports nothing ready.
  p.reset();
  std::thread aborted([&] { ready = p.wait(1); });
  p.abort();
  aborted.join();
  CHECK_FALSE(ready);
}

TEST_CASE("a replica marks the buckets it wrote, on its own thread, before a waiter sees them", "[buckets]") {
  BucketProgress p({{1088, 1300, 5}, {128, 1088, 2}, {0, 128, 0}}, 2);
  std::mutex mu;
  std::vector<std::tuple<int, size_t, size_t>> marks;
  std::vector<std::vector<bool>> marked(2, std::vector<bool>(3, false));
  p.set_on_written([&](int r, size_t from, size_t to) {
    std::lock_guard<std::mutex> lock(mu);
    marks.emplace_back(r, from, to);
    for (size_t b = from; b < to; ++b) marked[static_cast<size_t>(r)][b] = true;
  });
  p.reset();
  bool seen_marked = false;
  std::thread waiter([&] {
    REQUIRE(p.wait(0));
    std::lock_guard<std::mutex> lock(mu);
    seen_marked = marked[0][0] && marked[1][0];
  });
  p.backward_ran(0, 5);
  p.backward_ran(1, 6);  // not yet past bucket 0's last step: nothing to mark
  std::thread replica1([&] { p.backward_ran(1, 5); });
  replica1.join();
  waiter.join();
  CHECK(seen_marked);
  p.backward_ran(0, 0);  // past the other two at once
  p.finished(0);         // nothing left to mark
  p.finished(1);
  CHECK(p.wait(2));
  const std::vector<std::tuple<int, size_t, size_t>> want = {{0, 0, 1}, {1, 0, 1}, {0, 1, 3}, {1, 1, 3}};
  CHECK(marks == want);
}
