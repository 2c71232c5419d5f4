// The axes of a reduction (ABI 1.9's ReduceSum, Mean, Max) merged, written
// once for every plugin: adjacent axes of one kind (kept or reduced) are
// contiguous in x and merge into one run, size-1 axes drop out, so any
// reduction is "outputs x inner" over a few strided runs.
#pragma once

#include <axon/plugin_abi.h>

#include <algorithm>
#include <cstdint>

namespace axon {

// Sizes and strides (in elements of x) of the kept and the reduced runs, outer first.
struct ReduceRuns {
  int kept = 0, reduced = 0;
  int64_t kept_size[AXON_MAX_RANK], kept_stride[AXON_MAX_RANK];
  int64_t reduced_size[AXON_MAX_RANK], reduced_stride[AXON_MAX_RANK];
  int64_t outputs = 1, inner = 1;  // products of the kept and of the reduced sizes
};

// x's dims[rank] reduced over attrs' axes (validated: in range, distinct).
inline ReduceRuns reduce_runs(int rank, const int64_t* dims, const axon_reduce_attrs& a) {
  bool reduced[AXON_MAX_RANK] = {};
  for (int i = 0; i < a.num_axes; ++i) reduced[a.axes[i] < 0 ? a.axes[i] + rank : a.axes[i]] = true;
  ReduceRuns r;
  int64_t stride = 1;
  int last = -1;  // the kind of the run last added (0 kept, 1 reduced), -1 none yet
  for (int d = rank - 1; d >= 0; --d) {  // innermost first; reversed below
    const int64_t n = dims[d];
    if (n == 1) continue;
    int& count = reduced[d] ? r.reduced : r.kept;
    int64_t* size = reduced[d] ? r.reduced_size : r.kept_size;
    int64_t* strides = reduced[d] ? r.reduced_stride : r.kept_stride;
    if (last == static_cast<int>(reduced[d])) {
      size[count - 1] *= n;
    } else {
      size[count] = n;
      strides[count++] = stride;
    }
    stride *= n;
    last = static_cast<int>(reduced[d]);
  }
  std::reverse(r.kept_size, r.kept_size + r.kept);
  std::reverse(r.kept_stride, r.kept_stride + r.kept);
  std::reverse(r.reduced_size, r.reduced_size + r.reduced);
  std::reverse(r.reduced_stride, r.reduced_stride + r.reduced);
  for (int i = 0; i < r.kept; ++i) r.outputs *= r.kept_size[i];
  for (int i = 0; i < r.reduced; ++i) r.inner *= r.reduced_size[i];
  return r;
}

}  // namespace axon
