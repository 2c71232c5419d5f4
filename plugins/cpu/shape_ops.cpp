// ConcatV2, Slice and Pad: copies of contiguous runs (memcpy), in fixed
// chunks over the device's threads. Slice and Pad merge the trailing
// dimensions the smaller tensor spans whole into one run, so a slice of
// whole rows is one copy per row however short the last dimension is.
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace axon::cpu {
namespace {

// Copies below kSerialCopy floats run on the calling thread; larger ones in
// chunks of about kCopyChunk floats. A row costs kRowCost floats' copying
// besides its own (finding it, the call): a channel slice of an NHWC tensor
// has rows of 4 floats, so its rows, not its floats, set its time (the
// Inception cell's four Slices of its Concatenate's gradient ran on one
// thread below kSerialCopy floats: 127 us a call on 1 thread, 100 on 2).
constexpr int64_t kSerialCopy = 1 << 18;
constexpr int64_t kCopyChunk = 1 << 16;
constexpr int64_t kRowCost = 16;
// A concat of short rows writes y in blocks of about kConcatBlock floats (16
// KiB, in L1), each input's part of a block in turn: y's cache lines are
// fetched once per block, not once per input (the Inception cell's four
// branches of 8, 8, 4 and 4 channels: 89 -> 62 us; 2 or 8 KiB: 64, 71 us).
constexpr int64_t kConcatBlock = 4096;

// A run of n floats: memcpy, or for short runs a loop of 4-float moves (a
// call would cost more than the copy; shape_ops.cpp is compiled with
// -fno-tree-loop-distribute-patterns so the loop stays a loop).
void copy_floats(float* dst, const float* src, int64_t n) {
  if (n >= 64) {
    std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  using F4 = simd::Vec<4>::f;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) simd::store(dst + i, simd::load<F4>(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

// n rows of w floats, `from` and `to` advancing by their own strides: a
// branch's block of a channel concat (w of 4 to 16 floats, one or a few
// vector moves) runs at a width the compiler knows.
template <int W>
void copy_rows_of(float* to, int64_t to_stride, const float* from, int64_t from_stride, int64_t n) {
  using F4 = simd::Vec<4>::f;
  for (int64_t r = 0; r < n; ++r, from += from_stride, to += to_stride)
#pragma GCC unroll 4
    for (int i = 0; i < W; i += 4) simd::store(to + i, simd::load<F4>(from + i));
}
void copy_rows(float* to, int64_t to_stride, const float* from, int64_t from_stride, int64_t w, int64_t n) {
  switch (w) {
    case 4: return copy_rows_of<4>(to, to_stride, from, from_stride, n);
    case 8: return copy_rows_of<8>(to, to_stride, from, from_stride, n);
    case 12: return copy_rows_of<12>(to, to_stride, from, from_stride, n);
    case 16: return copy_rows_of<16>(to, to_stride, from, from_stride, n);
    default:
      for (int64_t r = 0; r < n; ++r, from += from_stride, to += to_stride) copy_floats(to, from, w);
  }
}

// y = the inputs joined along axis. A row of y (one index of the dimensions
// before the axis) is each input's block in turn.
void concat_v2(CpuDevice& d, const KernelCall& c) {
  TensorRef y = c.output(0);
  const int axis = c.attrs<axon_concat_attrs>().axis;
  const int64_t total = y.numel();
  if (total == 0) return;
  int64_t inner = 1;
  for (int i = axis + 1; i < y.rank(); ++i) inner *= y.dim(i);
  const int64_t row = y.dim(axis) * inner;
  std::vector<int64_t> start, width;  // each input's block within a row
  std::vector<const float*> src;
  int64_t at = 0;
  for (int k = 0; k < c.num_inputs(); ++k) {
    start.push_back(at);
    width.push_back(c.input(k).dim(axis) * inner);
    src.push_back(c.input(k).data<float>());
    at += width.back();
  }
  float* yp = y.data<float>();
  if (row <= kCopyChunk) {  // whole rows per thread; each input's blocks of them in turn, at y's row stride
    const int64_t block_rows = std::max<int64_t>(1, kConcatBlock / row);
    const int64_t rows = total / row, row_cost = row + kRowCost * static_cast<int64_t>(src.size());
    d.pool().for_ranges(rows, std::max<int64_t>(1, kCopyChunk / row_cost), rows * row_cost >= kSerialCopy,
                        [&](int, int64_t r0, int64_t r1) {
                          for (int64_t b0 = r0; b0 < r1; b0 += block_rows) {
                            const int64_t n = std::min(block_rows, r1 - b0);
                            for (size_t k = 0; k < src.size(); ++k)
                              copy_rows(yp + b0 * row + start[k], row, src[k] + b0 * width[k], width[k], width[k], n);
                          }
                        });
    return;
  }
  // Long rows (joined along an early axis): chunks of y, each from the blocks it covers.
  d.pool().for_ranges(total, kCopyChunk, total >= kSerialCopy, [&](int, int64_t lo, int64_t hi) {
    size_t k = 0;
    for (int64_t pos = lo; pos < hi;) {
      const int64_t r = pos / row, within = pos % row;
      if (within < start[k]) k = 0;  // a new row
      while (within >= start[k] + width[k]) ++k;  // empty blocks are passed over
      const int64_t len = std::min(start[k] + width[k] - within, hi - pos);
      copy_floats(yp + pos, src[k] + r * width[k] + (within - start[k]), len);
      pos += len;
    }
  });
}

// Where `small` sits in `large` at `begin` (Slice: small = y, Pad: small =
// x): dimensions [0, k) index rows, [k, rank) form one contiguous run in
// both (the dimensions after k are whole in small).
struct Placement {
  int k = 0;
  int64_t rows = 1, small_run = 1, large_run = 1, run_offset = 0;  // run_offset: begin[k] in large's run
  std::vector<int64_t> small_dims, large_strides, begin;

  Placement(const TensorRef& small, const TensorRef& large, const int64_t* b) {
    const int rank = small.rank();
    k = rank > 0 ? rank - 1 : 0;
    while (k > 0 && small.dim(k) == large.dim(k)) --k;
    large_strides.assign(static_cast<size_t>(rank), 1);
    for (int i = rank - 2; i >= 0; --i)
      large_strides[static_cast<size_t>(i)] = large_strides[static_cast<size_t>(i + 1)] * large.dim(i + 1);
    for (int i = 0; i < rank; ++i) {
      small_dims.push_back(small.dim(i));
      begin.push_back(b[i]);
      if (i < k) {
        rows *= small.dim(i);
      } else {
        small_run *= small.dim(i);
        large_run *= large.dim(i);
      }
    }
    if (rank > 0) run_offset = begin[static_cast<size_t>(k)] * large_strides[static_cast<size_t>(k)];
    linear = k > 0;
    for (int i = 0; i < k; ++i) linear = linear && begin[static_cast<size_t>(i)] == 0 && small.dim(i) == large.dim(i);
    if (linear) row_stride = large_strides[static_cast<size_t>(k - 1)];
  }
  // Rows whole in every dimension before k (a channel slice of NHWC): row r
  // starts at run_offset + r * row_stride in large.
  bool linear = false;
  int64_t row_stride = 0;
  // Offset in large of the run of small's row r.
  int64_t large_offset(int64_t r) const {
    int64_t off = run_offset;
    for (int i = k - 1; i >= 0; --i) {
      const int64_t idx = r % small_dims[static_cast<size_t>(i)];
      r /= small_dims[static_cast<size_t>(i)];
      off += (begin[static_cast<size_t>(i)] + idx) * large_strides[static_cast<size_t>(i)];
    }
    return off;
  }
};

// The offsets in large of small's rows r0, r0 + 1, ...: an odometer over the
// row dimensions (a division per dimension once, then additions), since a
// channel slice of an NHWC tensor has rows of a few floats and divisions per
// row cost more than the copies.
class RowOffsets {
 public:
  RowOffsets(const Placement& p, int64_t r0) : p_(p), idx_(static_cast<size_t>(p.k), 0), off_(p.large_offset(r0)) {
    for (int i = p.k - 1; i >= 0; --i) {
      idx_[static_cast<size_t>(i)] = r0 % p.small_dims[static_cast<size_t>(i)];
      r0 /= p.small_dims[static_cast<size_t>(i)];
    }
  }
  int64_t offset() const { return off_; }
  void next() {
    for (int i = p_.k - 1; i >= 0; --i) {
      const auto u = static_cast<size_t>(i);
      off_ += p_.large_strides[u];
      if (++idx_[u] < p_.small_dims[u]) return;
      off_ -= idx_[u] * p_.large_strides[u];
      idx_[u] = 0;
    }
  }

 private:
  const Placement& p_;
  std::vector<int64_t> idx_;
  int64_t off_;
};

void slice(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  if (y.numel() == 0) return;
  const Placement p(y, x, c.attrs<axon_slice_attrs>().begin);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const int64_t row_cost = p.small_run + kRowCost;
  d.pool().for_ranges(p.rows, std::max<int64_t>(1, kCopyChunk / row_cost), p.rows * row_cost >= kSerialCopy,
                      [&](int, int64_t r0, int64_t r1) {
                        if (p.linear)  // its own loop: a branch in RowOffsets::next() ran 30 -> 47 us
                          return copy_rows(yp + r0 * p.small_run, p.small_run, xp + p.run_offset + r0 * p.row_stride,
                                           p.row_stride, p.small_run, r1 - r0);
                        RowOffsets at(p, r0);
                        for (int64_t r = r0; r < r1; ++r, at.next())
                          copy_floats(yp + r * p.small_run, xp + at.offset(), p.small_run);
                      });
}

// y's rows (the dimensions before k, in y) are zeros outside x's region;
// inside it, zeros, x's run, zeros. Each element of y is written once.
void pad(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  if (y.numel() == 0) return;
  const auto& a = c.attrs<axon_slice_attrs>();
  const Placement p(x, y, a.begin);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  int64_t y_rows = 1;
  for (int i = 0; i < p.k; ++i) y_rows *= y.dim(i);
  const int64_t run = p.large_run;
  d.pool().for_ranges(y_rows, std::max<int64_t>(1, kCopyChunk / run), y.numel() >= kSerialCopy,
                      [&](int, int64_t r0, int64_t r1) {
                        for (int64_t r = r0; r < r1; ++r) {
                          float* out = yp + r * run;
                          // r's index in y's leading dimensions, and x's row there if inside.
                          int64_t rest = r, x_row = 0, scale = 1;
                          bool inside = true;
                          for (int i = p.k - 1; i >= 0; --i) {
                            const int64_t idx = rest % y.dim(i) - a.begin[i];
                            rest /= y.dim(i);
                            inside = inside && idx >= 0 && idx < x.dim(i);
                            x_row += idx * scale;
                            scale *= x.dim(i);
                          }
                          if (!inside || p.small_run == 0) {
                            std::fill(out, out + run, 0.0f);
                            continue;
                          }
                          std::fill(out, out + p.run_offset, 0.0f);
                          copy_floats(out + p.run_offset, xp + x_row * p.small_run, p.small_run);
                          std::fill(out + p.run_offset + p.small_run, out + run, 0.0f);
                        }
                      });
}

}  // namespace

void add_shape_kernels(sdk::KernelTable& t) {
  add<OpId::ConcatV2, concat_v2>(t);
  add<OpId::Slice, slice>(t);
  add<OpId::Pad, pad>(t);
}

}  // namespace axon::cpu
