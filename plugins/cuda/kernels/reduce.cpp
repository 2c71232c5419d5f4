// ABI 1.9's ReduceSum, Mean and Max on axon's own CUDA kernels (reduce.cu):
// x's axes merged into runs of kept and reduced ones here, on the host.
#include "reduce.hpp"
#include "cuda_device.hpp"

#include <algorithm>

namespace axon::cuda {
namespace {

// Adjacent axes of one kind merge into one run (contiguous in x); size-1 axes drop out.
launch::ReduceRuns merge_axes(const sdk::TensorRef& x, const axon_reduce_attrs& a) {
  const int rank = x.rank();
  bool reduced[AXON_MAX_RANK] = {};
  for (int i = 0; i < a.num_axes; ++i) reduced[a.axes[i] < 0 ? a.axes[i] + rank : a.axes[i]] = true;
  launch::ReduceRuns r;
  int64_t stride = 1;
  int last = -1;  // the kind of the run last added (0 kept, 1 reduced), -1 none yet
  for (int d = rank - 1; d >= 0; --d) {  // innermost first; reversed below
    const int64_t n = x.dim(d);
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

template <launch::Reduction R>
void reduce(CudaDevice& d, const sdk::KernelCall& c) {
  launch::reduce(d.stream(), R, merge_axes(c.input(0), c.attrs<axon_reduce_attrs>()), c.input(0).data<float>(),
                 c.output(0).data<float>());
}

}  // namespace

void register_reduce_kernels(sdk::KernelTable& t) {
  add<OpId::ReduceSum, reduce<launch::Reduction::sum>>(t);
  add<OpId::Mean, reduce<launch::Reduction::mean>>(t);
  add<OpId::Max, reduce<launch::Reduction::max>>(t);
}

}  // namespace axon::cuda
