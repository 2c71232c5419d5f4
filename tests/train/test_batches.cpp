// BatchPipeline: every sample once per epoch, a seeded order that changes per
// epoch, the same batches with and without the background thread, and the
// rest of an epoch from a resumed step.
#include "train_test_util.hpp"

#include <axon/data/batches.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <set>
#include <thread>

using namespace axon;

namespace {

data::ImageSet make_set(int64_t n, int64_t rows = 3, int64_t cols = 2) {
  data::ImageSet s;
  s.count = n;
  s.rows = rows;
  s.cols = cols;
  s.images.resize(static_cast<size_t>(n * rows * cols));
  s.labels.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    s.labels[static_cast<size_t>(i)] = static_cast<uint8_t>(i % 10);
    for (int64_t k = 0; k < rows * cols; ++k) s.images[static_cast<size_t>(i * rows * cols + k)] = static_cast<uint8_t>(i);
  }
  return s;
}

// The sample ids of one epoch, batch by batch (pixel 0 of an image is its id).
std::vector<std::vector<int>> epoch_ids(data::BatchPipeline& p, int64_t epoch) {
  std::vector<std::vector<int>> out;
  p.begin_epoch(epoch);
  for (int64_t s = 0; s < p.steps(); ++s) {
    const data::HostBatch& b = p.next();
    REQUIRE(b.step == s);
    REQUIRE(b.size == p.size_of(s));
    std::vector<int> ids;
    for (int64_t i = 0; i < b.size; ++i) {
      const int id = b.images[static_cast<size_t>(i * 6)];
      for (int k = 1; k < 6; ++k) REQUIRE(b.images[static_cast<size_t>(i * 6 + k)] == id);
      REQUIRE(b.labels[static_cast<size_t>(i)] == id % 10);
      ids.push_back(id);
    }
    out.push_back(ids);
  }
  return out;
}

}  // namespace

TEST_CASE("Batches: each epoch covers every sample once, last batch short", "[batches]") {
  const data::ImageSet set = make_set(103);
  data::BatchPipeline p(set, 10, true, 7);
  CHECK(p.steps() == 11);
  auto e0 = epoch_ids(p, 0);
  REQUIRE(e0.size() == 11);
  CHECK(e0.back().size() == 3);
  std::vector<int> all;
  for (auto& b : e0) all.insert(all.end(), b.begin(), b.end());
  std::vector<int> sorted = all;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expect(103);
  std::iota(expect.begin(), expect.end(), 0);
  CHECK(sorted == expect);
  CHECK(all != expect);  // shuffled
}

TEST_CASE("Batches: the order depends only on seed and epoch", "[batches]") {
  const data::ImageSet set = make_set(200);
  data::BatchPipeline a(set, 16, true, 123, true), b(set, 16, true, 123, false), c(set, 16, true, 124, true);
  auto a0 = epoch_ids(a, 0), a1 = epoch_ids(a, 1);
  CHECK(a0 == epoch_ids(b, 0));   // background thread or not: same batches
  CHECK(a1 == epoch_ids(b, 1));
  CHECK(a0 != a1);                // reshuffled each epoch
  CHECK(a0 != epoch_ids(c, 0));   // another seed, another order
  CHECK(epoch_ids(a, 0) == a0);   // replaying an epoch gives it again
}

TEST_CASE("Batches: no shuffle keeps file order", "[batches]") {
  const data::ImageSet set = make_set(25);
  data::BatchPipeline p(set, 8, false, 0);
  auto e = epoch_ids(p, 3);
  CHECK(e[0] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(e[3] == std::vector<int>{24});
}

TEST_CASE("Batches: an epoch may be abandoned midway", "[batches]") {
  const data::ImageSet set = make_set(100);
  data::BatchPipeline p(set, 10, true, 5);
  p.begin_epoch(0);
  p.next();
  p.next();
  auto full = epoch_ids(p, 1);  // begins a new epoch while batches are in flight
  data::BatchPipeline q(set, 10, true, 5, false);
  CHECK(full == epoch_ids(q, 1));
  p.begin_epoch(2);
  for (int i = 0; i < 10; ++i) p.next();
  CHECK_THROWS_AS(p.next(), RuntimeError);
}

TEST_CASE("Batches: an epoch resumed at a step gives the rest of that epoch's batches", "[batches]") {
  const data::ImageSet set = make_set(100);
  data::BatchPipeline whole(set, 10, true, 5, false);
  const auto all = epoch_ids(whole, 3);
  for (bool background : {false, true}) {
    data::BatchPipeline p(set, 10, true, 5, background);
    p.begin_epoch(3, 4);
    // Give the thread time to fill both slots: the first next() must not
    // free the one that holds the batch after it.
    if (background) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (int64_t s = 4; s < p.steps(); ++s) {
      const data::HostBatch& b = p.next();
      REQUIRE(b.step == s);
      std::vector<int> ids;
      for (int64_t i = 0; i < b.size; ++i) ids.push_back(b.images[static_cast<size_t>(i * 6)]);
      CHECK(ids == all[static_cast<size_t>(s)]);
    }
    CHECK_THROWS_AS(p.next(), RuntimeError);
  }
  data::BatchPipeline p(set, 10, true, 5);
  CHECK_THROWS_AS(p.begin_epoch(0, 11), RuntimeError);
}

TEST_CASE("Batches: batch size must be positive", "[batches]") {
  const data::ImageSet set = make_set(10);
  CHECK_THROWS_AS(data::BatchPipeline(set, 0, true, 1), UsageError);
}
