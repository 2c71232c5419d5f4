// LayerNorm and LayerNormGrad (ABI 2.3) on axon's own kernels
// (layer_norm.cu): x viewed as [rows, k], each row normalised over its k
// values, sums in double in a fixed order (layer_norm_math.hpp).
#include "cuda_device.hpp"
#include "layer_norm.hpp"

namespace axon::cuda {
namespace {

void layer_norm_forward(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0);
  launch::layer_norm(d.stream(), x.data<float>(), x.dim(0), x.dim(1), c.input(1).data<float>(),
                     c.input(2).data<float>(), c.attrs<axon_layer_norm_attrs>().epsilon, c.output(0).data<float>(),
                     c.output(1).data<float>(), c.output(2).data<float>());
}

// dx, and scale_backprop and offset_backprop (zeros over no rows).
void layer_norm_backward(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(1);
  const int64_t rows = x.dim(0), k = x.dim(1);
  if (k == 0) return;
  CudaDevice::Scratch scratch(d, static_cast<size_t>(launch::layer_norm_grad_scratch_bytes(rows, k)));
  launch::layer_norm_grad(d.stream(), c.input(0).data<float>(), x.data<float>(), rows, k, c.input(2).data<float>(),
                          c.input(3).data<float>(), c.input(4).data<float>(), c.output(0).data<float>(),
                          c.output(1).data<float>(), c.output(2).data<float>(), scratch.get());
}

}  // namespace

void register_layer_norm_kernels(sdk::KernelTable& t) {
  add<OpId::LayerNorm, layer_norm_forward>(t);
  add<OpId::LayerNormGrad, layer_norm_backward>(t);
}

}  // namespace axon::cuda
