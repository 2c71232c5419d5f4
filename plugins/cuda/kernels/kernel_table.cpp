// Every kernel of the CUDA plugin, by area. A file of its own so that the
// fake-library tests (tests/cuda/cuda_failure_paths_test.cpp) can build the
// device with only the areas they drive.
#include "cuda_device.hpp"

namespace axon::cuda {

const sdk::KernelTable& kernel_table() {
  static const sdk::KernelTable table = [] {
    sdk::KernelTable t;
    register_conv_kernels(t);
    register_pool_activation_kernels(t);
    register_matmul_kernels(t);
    register_own_kernels(t);
    register_activation_kernels(t);
    register_tensor_kernels(t);
    register_batch_norm_kernels(t);
    register_optimizer_kernels(t);
    register_loss_kernels(t);
    register_random_kernels(t);
    register_reduce_kernels(t);
    register_layer_norm_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace axon::cuda
