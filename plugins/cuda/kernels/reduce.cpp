// ABI 1.9's ReduceSum, Mean and Max on axon's own CUDA kernels (reduce.cu):
// x's axes merged into runs of kept and reduced ones on the host
// (axon/reduce_runs.hpp).
#include "reduce.hpp"
#include "cuda_device.hpp"

namespace axon::cuda {
namespace {

template <launch::Reduction R>
void reduce(CudaDevice& d, const sdk::KernelCall& c) {
  const sdk::TensorRef x = c.input(0);
  launch::reduce(d.stream(), R, reduce_runs(x.rank(), x.c().dims, c.attrs<axon_reduce_attrs>()), x.data<float>(),
                 c.output(0).data<float>());
}

}  // namespace

void register_reduce_kernels(sdk::KernelTable& t) {
  add<OpId::ReduceSum, reduce<launch::Reduction::sum>>(t);
  add<OpId::Mean, reduce<launch::Reduction::mean>>(t);
  add<OpId::Max, reduce<launch::Reduction::max>>(t);
}

}  // namespace axon::cuda
