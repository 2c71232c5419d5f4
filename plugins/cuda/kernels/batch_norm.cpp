// FusedBatchNormV3 and FusedBatchNormGradV3 with TensorFlow's semantics
// (its CPU kernel; batch_norm_math.hpp) on axon's own kernels
// (batch_norm.cu): the statistics are the batch's biased variance and,
// for batch_variance, the running average of the unbiased one, conventions
// cuDNN's batch normalization does not share. _FusedBatchNormEx,
// _FusedBatchNormAddEx and their gradients are the same kernels with relu
// and a side input.
#include "batch_norm.hpp"
#include "cuda_device.hpp"

namespace axon::cuda {

namespace {

// side: _FusedBatchNormAddEx's side input, else null.
void batch_norm(CudaDevice& d, const sdk::KernelCall& c, const axon_batch_norm_attrs& a, bool relu,
                const float* side) {
  auto x = c.input(0), scale = c.input(1), offset = c.input(2), mean = c.input(3), variance = c.input(4),
       y = c.output(0);
  const int64_t cols = x.dim(-1);
  if (cols == 0) return;
  const int64_t rows = x.numel() / cols;
  CudaDevice::Scratch scratch(d, static_cast<size_t>(launch::batch_norm_scratch_bytes(rows, cols)));
  if (a.is_training) {
    launch::batch_norm_training(d.stream(), x.data<float>(), rows, cols, scale.data<float>(), offset.data<float>(),
                                mean.data<float>(), variance.data<float>(), a.epsilon, a.exponential_avg_factor, relu,
                                side, y.data<float>(), c.output(1).data<float>(), c.output(2).data<float>(),
                                c.output(3).data<float>(), c.output(4).data<float>(), scratch.get());
    return;
  }
  launch::batch_norm_inference(d.stream(), x.data<float>(), rows, cols, scale.data<float>(), offset.data<float>(),
                               mean.data<float>(), variance.data<float>(), a.epsilon, relu, side,
                               y.data<float>(), scratch.get());
  // The statistics' outputs that are passed: the given mean and variance, as TensorFlow's.
  for (int i = 1; i < c.num_outputs(); ++i)
    CUDA_CHECK(cudaMemcpyAsync(c.output(i).raw(), (i % 2 ? mean : variance).raw(),
                               static_cast<size_t>(cols) * sizeof(float), cudaMemcpyDeviceToDevice, d.stream()));
}

// reserve_space_1 and reserve_space_2: the mean and biased variance the
// forward used (the batch's in training, the given ones otherwise); relu_y:
// relu's output for _FusedBatchNormGradEx, else null; side_grad:
// _FusedBatchNormAddGradEx's side_input_backprop, else null.
void batch_norm_grad(CudaDevice& d, const sdk::KernelCall& c, const axon_batch_norm_attrs& a, const float* relu_y,
                     float* side_grad) {
  auto dy = c.input(0), x = c.input(1), scale = c.input(2), mean = c.input(3), variance = c.input(4);
  const int64_t cols = x.dim(-1);
  if (cols == 0) return;
  const int64_t rows = x.numel() / cols;
  CudaDevice::Scratch scratch(d, static_cast<size_t>(launch::batch_norm_scratch_bytes(rows, cols)));
  launch::batch_norm_grad(d.stream(), dy.data<float>(), relu_y, side_grad, x.data<float>(), rows, cols,
                          scale.data<float>(), mean.data<float>(), variance.data<float>(), a.epsilon,
                          a.is_training != 0, c.output(0).data<float>(), c.output(1).data<float>(),
                          c.output(2).data<float>(), scratch.get());
}

void fused_batch_norm(CudaDevice& d, const sdk::KernelCall& c) {
  batch_norm(d, c, c.attrs<axon_batch_norm_attrs>(), false, nullptr);
}
void fused_batch_norm_grad(CudaDevice& d, const sdk::KernelCall& c) {
  batch_norm_grad(d, c, c.attrs<axon_batch_norm_attrs>(), nullptr, nullptr);
}
// _FusedBatchNormEx and its gradient (ABI 1.5): the same kernels with relu.
void fused_batch_norm_ex(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU, nullptr);
}
void fused_batch_norm_grad_ex(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm_grad(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU ? c.input(5).data<float>() : nullptr,
                  nullptr);
}
// _FusedBatchNormAddEx and its gradient (ABI 2.1): with the side input, and
// its gradient (dy, masked with relu) written by the gradient's sums pass.
void fused_batch_norm_add_ex(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU, c.input(5).data<float>());
}
void fused_batch_norm_add_grad_ex(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm_grad(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU ? c.input(5).data<float>() : nullptr,
                  c.output(3).data<float>());
}

}  // namespace

void register_batch_norm_kernels(sdk::KernelTable& t) {
  add<OpId::FusedBatchNormV3, fused_batch_norm>(t);
  add<OpId::FusedBatchNormGradV3, fused_batch_norm_grad>(t);
  add<OpId::FusedBatchNormEx, fused_batch_norm_ex>(t);
  add<OpId::FusedBatchNormGradEx, fused_batch_norm_grad_ex>(t);
  add<OpId::FusedBatchNormAddEx, fused_batch_norm_add_ex>(t);
  add<OpId::FusedBatchNormAddGradEx, fused_batch_norm_add_grad_ex>(t);
}

}  // namespace axon::cuda
