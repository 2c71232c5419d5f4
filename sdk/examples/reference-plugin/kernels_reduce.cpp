// Naive kernels of ABI 1.9's reductions (ReduceSum, Mean, Max over a set of
// axes): every element of x visited in order and folded into the output
// element it reduces to, sums in double.
#include "kernels.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace ref {
namespace {

using namespace axon::sdk;

enum class Reduction { sum, mean, max };

template <Reduction R>
void reduce(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const auto& a = c.attrs<axon_reduce_attrs>();
  const int rank = x.rank();
  bool reduced[AXON_MAX_RANK] = {};
  for (int i = 0; i < a.num_axes; ++i) reduced[a.axes[i] < 0 ? a.axes[i] + rank : a.axes[i]] = true;
  // Output strides over x's axes (0 on a reduced one).
  int64_t stride[AXON_MAX_RANK] = {}, count = 1, outputs = 1;
  for (int d = rank - 1; d >= 0; --d)
    if (reduced[d]) {
      count *= x.dim(d);
    } else {
      stride[d] = outputs;
      outputs *= x.dim(d);
    }
  std::vector<double> acc(static_cast<size_t>(outputs),
                          R == Reduction::max ? -std::numeric_limits<double>::infinity() : 0.0);
  const float* xp = x.data<float>();
  int64_t index[AXON_MAX_RANK] = {};
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t o = 0;
    for (int d = 0; d < rank; ++d) o += index[d] * stride[d];
    double& s = acc[static_cast<size_t>(o)];
    if (R != Reduction::max)
      s += xp[i];
    else if (std::isnan(xp[i]) || xp[i] > s)
      s = std::isnan(s) ? s : xp[i];
    for (int d = rank - 1; d >= 0 && ++index[d] == x.dim(d); --d) index[d] = 0;
  }
  float* yp = y.data<float>();
  for (int64_t o = 0; o < outputs; ++o)
    yp[o] = static_cast<float>(R == Reduction::mean ? acc[static_cast<size_t>(o)] / static_cast<double>(count)
                                                    : acc[static_cast<size_t>(o)]);
}

}  // namespace

void add_reduce_kernels(KernelTable& t) {
  using axon::OpId;
  add<OpId::ReduceSum, reduce<Reduction::sum>>(t);
  add<OpId::Mean, reduce<Reduction::mean>>(t);
  add<OpId::Max, reduce<Reduction::max>>(t);
}

}  // namespace ref
