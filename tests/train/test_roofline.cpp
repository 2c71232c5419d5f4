// The roofline report's arithmetic (bench/train/roofline.hpp): which bound
// applies to an op and its bound time, from made-up roofs and op totals, so
// every figure below follows by hand from the numbers in the test.
#include "roofline.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace axon;
using namespace axon::bench;

namespace {

// 100 GFLOP/s, 10 GB/s (balance 10 FLOP/B), 1 us a call.
const Roofs kRoofs{100, 10, 1e-6};

OpTime op(int64_t calls, double seconds, int64_t flops, int64_t bytes, const char* layer = "") {
  OpTime t;
  t.op = "Op";
  t.layer = layer;
  t.calls = calls;
  t.seconds = seconds;
  t.flops = flops;
  t.bytes = bytes;
  return t;
}

}  // namespace

TEST_CASE("roofline: an op below the balance is memory-bound, its calls' floor added to its bytes' time") {
  // 1e8 bytes at 10 GB/s: 10 ms; 10 calls: 10 us more.
  const RooflineRow r = roofline_rows({op(10, 0.02, 100'000'000, 100'000'000)}, kRoofs).front();
  CHECK(r.bound == Bound::memory);
  CHECK(r.intensity == Approx(1.0));
  CHECK(r.bound_seconds == Approx(0.01 + 10e-6));
  CHECK(r.share == Approx((0.01 + 10e-6) / 0.02));
  CHECK(r.gbs == Approx(5.0));
}

TEST_CASE("roofline: an op at or above the balance is compute-bound") {
  // 1e10 FLOPs at 100 GFLOP/s: 0.1 s; 1e9 bytes: the balance exactly.
  const RooflineRow r = roofline_rows({op(1, 0.2, 10'000'000'000, 1'000'000'000)}, kRoofs).front();
  CHECK(r.bound == Bound::compute);
  CHECK(r.bound_seconds == Approx(0.1 + 1e-6));
  CHECK(r.gflops == Approx(50.0));
}

TEST_CASE("roofline: an op whose calls' floor exceeds its roof's time is call-bound") {
  // 1,000 calls moving 1 KB each: 0.1 us of memory a call against 1 us of call.
  const RooflineRow r = roofline_rows({op(1000, 0.004, 1000 * 250, 1000 * 1000)}, kRoofs).front();
  CHECK(r.bound == Bound::call);
  CHECK(r.bound_seconds == Approx(1000 * (1e-6 + 0.1e-6)));
  CHECK(r.share == Approx(1.1e-3 / 0.004));
  CHECK(std::string(bound_name(r.bound)) == "call");
}

TEST_CASE("roofline: without a measured floor no op is call-bound") {
  const Roofs roofs{100, 10, 0};
  const RooflineRow r = roofline_rows({op(1000, 0.004, 1000 * 250, 1000 * 1000)}, roofs).front();
  CHECK(r.bound == Bound::memory);
  CHECK(r.bound_seconds == Approx(1e-4));
}

TEST_CASE("roofline: an op's layers take their own bounds, one row per bound") {
  // conv_a: 1e8 bytes, 1e8 FLOPs: memory, 10 ms. conv_b: 1e10 FLOPs, 1e8 bytes: compute, 100 ms. Their totals
  // (1.01e10 FLOPs over 2e8 bytes, above the balance) would call both compute-bound: 101 ms, not 110.
  const std::vector<RooflineRow> rows = roofline_rows(
      {op(1, 0.2, 10'000'000'000, 100'000'000, "conv_b"), op(1, 0.02, 100'000'000, 100'000'000, "conv_a")},
      Roofs{100, 10, 0});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "Op (compute)");
  CHECK(rows[0].bound_seconds == Approx(0.1));
  CHECK(rows[0].share == Approx(0.5));
  CHECK(rows[1].name == "Op (memory)");
  CHECK(rows[1].bound_seconds == Approx(0.01));
  CHECK(rows[1].gbs == Approx(5.0));
}

TEST_CASE("roofline: an op's layers under one bound share its row, their bounds summed") {
  const std::vector<RooflineRow> rows = roofline_rows(
      {op(10, 0.02, 100'000'000, 100'000'000, "a"), op(5, 0.01, 50'000'000, 50'000'000, "b")}, kRoofs);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].name == "Op");
  CHECK(rows[0].op.calls == 15);
  CHECK(rows[0].op.seconds == Approx(0.03));
  CHECK(rows[0].bound_seconds == Approx(0.015 + 15e-6));
}

TEST_CASE("roofline: the per-layer rows name op and layer and keep their own bounds") {
  const std::vector<RooflineRow> rows = roofline_layer_rows(
      {op(1, 0.2, 10'000'000'000, 100'000'000, "conv_b"), op(10, 0.02, 100'000'000, 100'000'000)}, kRoofs);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].name == "Op conv_b");
  CHECK(rows[0].bound == Bound::compute);
  CHECK(rows[0].share == Approx((0.1 + 1e-6) / 0.2));
  CHECK(rows[1].name == "Op");
  CHECK(rows[1].bound == Bound::memory);
  CHECK(rows[1].bound_seconds == Approx(0.01 + 10e-6));
}
