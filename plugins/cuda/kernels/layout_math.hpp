// The per-element arithmetic of Slice and Pad, host and device alike
// (device_math.hpp), tested on the host by tests/cuda/layout_math_test.cpp.
#pragma once

#include "device_math.hpp"

#include <cstdint>

namespace axon::cuda {

constexpr int kMaxWindowRank = 8;  // AXON_MAX_RANK

// dst[c] = src[c + offset] where that lies inside src, else 0, over a
// row-major dst: Slice (offset = begin) and Pad (offset = -begin).
struct Window {
  int rank = 0;
  int64_t dst_dims[kMaxWindowRank] = {};
  int64_t src_dims[kMaxWindowRank] = {};
  int64_t offset[kMaxWindowRank] = {};
};

// The element of src that dst's element `i` takes, or -1 for a zero.
AXON_HD inline int64_t window_source(const Window& w, int64_t i) {
  int64_t from = 0, stride = 1;
  for (int k = w.rank - 1; k >= 0; --k) {
    const int64_t at = i % w.dst_dims[k] + w.offset[k];
    i /= w.dst_dims[k];
    if (at < 0 || at >= w.src_dims[k]) return -1;
    from += at * stride;
    stride *= w.src_dims[k];
  }
  return from;
}

}  // namespace axon::cuda
