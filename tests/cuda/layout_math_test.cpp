// Slice's and Pad's per-element arithmetic (plugins/cuda/kernels/layout_math.hpp),
// which the CUDA kernels run, checked on the host against the op table's
// definitions written as loops over coordinates, ranks 1 to 5.
#include "layout_math.hpp"

#include <catch2/catch.hpp>

#include <random>
#include <vector>

using axon::cuda::Window;

namespace {

int64_t count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Calls f(coordinates) for every coordinate of `dims`, row-major.
template <class F>
void each(const std::vector<int64_t>& dims, F f) {
  std::vector<int64_t> at(dims.size(), 0);
  for (int64_t i = 0; i < count(dims); ++i) {
    f(at);
    for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
      if (++at[k] < dims[k]) break;
      at[k] = 0;
    }
  }
}

int64_t offset_of(const std::vector<int64_t>& dims, const std::vector<int64_t>& at) {
  int64_t o = 0;
  for (size_t k = 0; k < dims.size(); ++k) o = o * dims[k] + at[k];
  return o;
}

std::vector<float> apply(const Window& w, const std::vector<float>& src, int64_t n) {
  std::vector<float> dst(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t from = axon::cuda::window_source(w, i);
    dst[i] = from < 0 ? 0.f : src[from];
  }
  return dst;
}

}  // namespace

TEST_CASE("Slice takes x[begin : begin + shape(y)] and Pad puts x at begin in zeros") {
  std::mt19937 rng(3);
  int cases = 0;
  for (int rank = 1; rank <= 5; ++rank)
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<int64_t> large(rank), small(rank), begin(rank);
      for (int k = 0; k < rank; ++k) {
        large[k] = std::uniform_int_distribution<int64_t>(1, 6)(rng);
        small[k] = std::uniform_int_distribution<int64_t>(0, large[k])(rng);
        begin[k] = std::uniform_int_distribution<int64_t>(0, large[k] - small[k])(rng);
      }
      std::vector<float> big(static_cast<size_t>(count(large))), little(static_cast<size_t>(count(small)));
      for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i + 1);
      for (size_t i = 0; i < little.size(); ++i) little[i] = -static_cast<float>(i + 1);
      Window slice, pad;
      slice.rank = pad.rank = rank;
      for (int k = 0; k < rank; ++k) {
        slice.dst_dims[k] = pad.src_dims[k] = small[k];
        slice.src_dims[k] = pad.dst_dims[k] = large[k];
        slice.offset[k] = begin[k];
        pad.offset[k] = -begin[k];
      }
      std::vector<float> want_slice(little.size()), want_pad(big.size(), 0.f);
      each(small, [&](const std::vector<int64_t>& at) {
        std::vector<int64_t> in(at);
        for (int k = 0; k < rank; ++k) in[k] += begin[k];
        want_slice[offset_of(small, at)] = big[offset_of(large, in)];
        want_pad[offset_of(large, in)] = little[offset_of(small, at)];
      });
      CHECK(apply(slice, big, count(small)) == want_slice);
      CHECK(apply(pad, little, count(large)) == want_pad);
      ++cases;
    }
  CHECK(cases == 100);
}
