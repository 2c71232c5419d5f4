// ABI 1.9's StatelessRandomNormalV2 and StatelessRandomUniformV2 on axon's
// own CUDA kernels (random.cu).
#include "random.hpp"
#include "cuda_device.hpp"

namespace axon::cuda {
namespace {

launch::RandomParams params(const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_random_attrs>();
  return {{a.key[0], a.key[1]}, {a.counter[0], a.counter[1], a.counter[2], a.counter[3]}, a.scale, a.offset};
}

void normal(CudaDevice& d, const sdk::KernelCall& c) {
  launch::stateless_normal(d.stream(), params(c), c.output(0).data<float>(), c.output(0).numel());
}

void uniform(CudaDevice& d, const sdk::KernelCall& c) {
  launch::stateless_uniform(d.stream(), params(c), c.output(0).data<float>(), c.output(0).numel());
}

}  // namespace

void register_random_kernels(sdk::KernelTable& t) {
  add<OpId::StatelessRandomNormalV2, normal>(t);
  add<OpId::StatelessRandomUniformV2, uniform>(t);
}

}  // namespace axon::cuda
