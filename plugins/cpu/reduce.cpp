// ABI 1.9's reductions over a set of axes (ReduceSum, Mean, Max). x's axes
// are first merged into alternating runs of kept and reduced ones (size-1
// axes dropped), so any reduction is "outputs x inner" over strided runs.
// Each output's inner elements are cut into chunks of kChunkElements, fixed
// by the shape alone; a chunk is folded in order (sums in double) and the
// chunks' partials are combined in chunk order, so the result does not
// depend on the thread count.
#include "device.hpp"
#include "kernels.hpp"

#include <axon/reduce_runs.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace axon::cpu {
namespace {

constexpr int64_t kChunkElements = 1 << 14;
constexpr int64_t kSerialElements = 1 << 15;

enum class Reduction { sum, mean, max };


template <Reduction R>
struct Fold {
  double value = R == Reduction::max ? -std::numeric_limits<double>::infinity() : 0.0;
  void add(double v) {
    if (R != Reduction::max)
      value += v;
    else if (v > value || std::isnan(v))
      value = std::isnan(value) ? value : v;
  }
};

// Folds x's elements [b, e) of one output's inner order; base: the output's offset in x.
template <Reduction R>
double fold_range(const ReduceRuns& r, const float* x, int64_t base, int64_t b, int64_t e) {
  Fold<R> f;
  if (r.reduced == 0) {  // nothing reduced: one element
    f.add(x[base]);
    return f.value;
  }
  int64_t idx[AXON_MAX_RANK], off = 0, rest = b;
  for (int g = r.reduced - 1; g >= 0; --g) {
    idx[g] = rest % r.reduced_size[g];
    rest /= r.reduced_size[g];
    off += idx[g] * r.reduced_stride[g];
  }
  const int last = r.reduced - 1;
  const int64_t step = r.reduced_stride[last];
  for (int64_t j = b; j < e;) {
    const int64_t run = std::min(e - j, r.reduced_size[last] - idx[last]);
    const float* p = x + base + off;
    for (int64_t k = 0; k < run; ++k) f.add(p[k * step]);
    j += run;
    idx[last] += run;
    off += run * step;
    for (int g = last; g > 0 && idx[g] == r.reduced_size[g]; --g) {
      off += r.reduced_stride[g - 1] - idx[g] * r.reduced_stride[g];
      idx[g] = 0;
      ++idx[g - 1];
    }
  }
  return f.value;
}

int64_t output_base(const ReduceRuns& r, int64_t o) {
  int64_t base = 0;
  for (int g = r.kept - 1; g >= 0; --g) {
    base += (o % r.kept_size[g]) * r.kept_stride[g];
    o /= r.kept_size[g];
  }
  return base;
}

template <Reduction R>
float finish(double value, int64_t count) {
  return static_cast<float>(R == Reduction::mean ? value / static_cast<double>(count) : value);
}

template <Reduction R>
void reduce(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  float* yp = y.data<float>();
  const int64_t outputs = y.numel();
  if (x.numel() == 0) {  // TensorFlow's answers over no element: 0, NaN, -inf
    std::fill(yp, yp + outputs, finish<R>(Fold<R>{}.value, 0));
    return;
  }
  const ReduceRuns r = reduce_runs(x.rank(), x.c().dims, c.attrs<axon_reduce_attrs>());
  const float* xp = x.data<float>();
  const bool parallel = x.numel() >= kSerialElements;
  const int64_t per_output = chunk_count(r.inner, kChunkElements);
  if (per_output == 1) {  // whole outputs per chunk of work
    d.pool().for_ranges(r.outputs, std::max<int64_t>(1, kChunkElements / r.inner), parallel,
                        [&](int, int64_t b, int64_t e) {
                          for (int64_t o = b; o < e; ++o)
                            yp[o] = finish<R>(fold_range<R>(r, xp, output_base(r, o), 0, r.inner), r.inner);
                        });
    return;
  }
  double* partial = d.partials_f64(static_cast<size_t>(r.outputs * per_output));
  d.pool().for_chunks(r.outputs * per_output, parallel, [&](int, int64_t w) {
    const int64_t o = w / per_output, b = (w % per_output) * kChunkElements;
    partial[w] = fold_range<R>(r, xp, output_base(r, o), b, std::min(r.inner, b + kChunkElements));
  });
  for (int64_t o = 0; o < r.outputs; ++o) {
    Fold<R> f;
    for (int64_t k = 0; k < per_output; ++k) f.add(partial[o * per_output + k]);
    yp[o] = finish<R>(f.value, r.inner);
  }
}

}  // namespace

void add_reduce_kernels(sdk::KernelTable& t) {
  add<OpId::ReduceSum, reduce<Reduction::sum>>(t);
  add<OpId::Mean, reduce<Reduction::mean>>(t);
  add<OpId::Max, reduce<Reduction::max>>(t);
}

}  // namespace axon::cpu
