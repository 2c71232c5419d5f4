// ConcatV2, Slice and Pad move values without arithmetic: the CPU plugin must
// equal the reference exactly, on random ranks 1 to 6, every axis, begins at
// both ends, empty inputs, and sizes that use several threads; and both must
// agree with hand-worked cases.
#include "kernel_test_util.hpp"

using namespace axon::test;

namespace {

int pick(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// Distinct values, so that any misplaced element shows.
std::vector<float> counting(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

void same(const char* op, const std::vector<HostTensor>& in, const std::vector<int64_t>& out, const void* attrs) {
  const auto r = compare_exact(run_host(cpu(), op, in, {out}, attrs)[0], run_host(ref(), op, in, {out}, attrs)[0]);
  INFO(op << " " << r.report);
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("ConcatV2 equals the reference on every axis", "[shape][cpu]") {
  std::mt19937 rng(1440);
  for (int trial = 0; trial < 60; ++trial) {
    const int rank = pick(rng, 1, 6), axis = pick(rng, 0, rank - 1), inputs = pick(rng, 1, 4);
    std::vector<int64_t> base(static_cast<size_t>(rank));
    for (auto& v : base) v = pick(rng, 1, 5);
    if (trial % 10 == 0) base[0] = 0;  // nothing to copy
    std::vector<HostTensor> in;
    std::vector<int64_t> out = base;
    out[static_cast<size_t>(axis)] = 0;
    for (int k = 0; k < inputs; ++k) {
      std::vector<int64_t> d = base;
      d[static_cast<size_t>(axis)] = pick(rng, 0, 4);  // empty inputs too
      out[static_cast<size_t>(axis)] += d[static_cast<size_t>(axis)];
      in.push_back(HostTensor{d, counting(numel(d), 1000.0f * static_cast<float>(k + 1))});
    }
    INFO("output " << shape_str(out) << " axis " << axis << " from " << inputs << " inputs");
    const axon_concat_attrs a{sizeof(axon_concat_attrs), axis};
    same("ConcatV2", in, out, &a);
  }
  // Large enough for several threads: the CNN-style channel concat of two feature maps.
  const axon_concat_attrs channels{sizeof(axon_concat_attrs), 3}, batch{sizeof(axon_concat_attrs), 0};
  const HostTensor x1{{32, 28, 28, 24}, counting(32 * 28 * 28 * 24, 0.0f)};
  const HostTensor x2{{32, 28, 28, 40}, counting(32 * 28 * 28 * 40, -1e6f)};
  same("ConcatV2", {x1, x2}, {32, 28, 28, 64}, &channels);
  same("ConcatV2", {x1, x1}, {64, 28, 28, 24}, &batch);
  // Short rows from many inputs, each width of the copy's fixed-width loops (4, 8, 12, 16) and others beside them,
  // over many blocks and both threads: the Inception cell's branches and more.
  std::vector<HostTensor> branches;
  int64_t channels_out = 0;
  for (int64_t ch : {8, 8, 4, 4, 12, 16, 5, 1}) {
    branches.push_back(HostTensor{{64, 26, 26, ch}, counting(64 * 26 * 26 * static_cast<size_t>(ch),
                                                             1e6f * static_cast<float>(branches.size()))});
    channels_out += ch;
    same("ConcatV2", branches, {64, 26, 26, channels_out}, &channels);
  }
}

TEST_CASE("Slice and Pad equal the reference at random places", "[shape][cpu]") {
  std::mt19937 rng(1441);
  for (int trial = 0; trial < 80; ++trial) {
    const int rank = pick(rng, 0, 6);
    std::vector<int64_t> large(static_cast<size_t>(rank)), small(static_cast<size_t>(rank));
    axon_slice_attrs a{sizeof(axon_slice_attrs), {}};
    for (int i = 0; i < rank; ++i) {
      const size_t u = static_cast<size_t>(i);
      large[u] = pick(rng, 1, 6);
      // whole dimensions often (they merge into one run), else any sub-range, sometimes empty
      small[u] = pick(rng, 0, 2) ? large[u] : pick(rng, trial % 9 ? 1 : 0, static_cast<int>(large[u]));
      a.begin[i] = pick(rng, 0, static_cast<int>(large[u] - small[u]));
    }
    INFO("small " << shape_str(small) << " in large " << shape_str(large));
    same("Slice", {HostTensor{large, counting(numel(large), 1.0f)}}, small, &a);
    same("Pad", {HostTensor{small, counting(numel(small), 1.0f)}}, large, &a);
  }
  // Large: a crop of a batch of images (rows shorter than the chunks) and its padding back.
  axon_slice_attrs crop{sizeof(axon_slice_attrs), {0, 2, 3, 0}};
  const std::vector<int64_t> image{64, 32, 32, 16}, cropped{64, 28, 27, 16};
  same("Slice", {HostTensor{image, counting(numel(image), 0.0f)}}, cropped, &crop);
  same("Pad", {HostTensor{cropped, counting(numel(cropped), 0.0f)}}, image, &crop);
  // Large, whole in every dimension but the channels (rows at one stride): 4 of 28 channels, a
  // Concatenate's gradient into one branch; enough rows for every thread.
  axon_slice_attrs branch{sizeof(axon_slice_attrs), {0, 0, 0, 4}};
  const std::vector<int64_t> joined{64, 26, 26, 28}, one_branch{64, 26, 26, 4};
  same("Slice", {HostTensor{joined, counting(numel(joined), 0.0f)}}, one_branch, &branch);
}

TEST_CASE("ConcatV2, Slice and Pad follow hand-worked cases", "[shape][ref][cpu]") {
  for (TestDevice* dev : {&cpu(), &ref()}) {
    // [[1,2],[3,4]] and [[5],[6]] joined on axis 1.
    const axon_concat_attrs axis1{sizeof(axon_concat_attrs), 1};
    const HostTensor left{{2, 2}, {1, 2, 3, 4}}, right{{2, 1}, {5, 6}};
    CHECK(run_host(*dev, "ConcatV2", {left, right}, {{2, 3}}, &axis1)[0] == std::vector<float>{1, 2, 5, 3, 4, 6});
    // x[1:3, 1:2] of a 3x3 counting matrix.
    const axon_slice_attrs at11{sizeof(axon_slice_attrs), {1, 1}};
    const HostTensor square{{3, 3}, counting(9, 0.0f)};
    CHECK(run_host(*dev, "Slice", {square}, {{2, 1}}, &at11)[0] == std::vector<float>{4, 7});
    // [[1,2]] padded into 3x4 at (1, 1).
    CHECK(run_host(*dev, "Pad", {HostTensor{{1, 2}, {1, 2}}}, {{3, 4}}, &at11)[0] ==
          std::vector<float>{0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0});
  }
}
