// MatMul on cuBLAS. axon's matrices are row-major; cuBLAS is column-major, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with no copies.
#include "cuda_device.hpp"

namespace axon::cuda {

namespace {

void matmul(CudaDevice& d, const sdk::KernelCall& c) {
  auto a = c.input(0), b = c.input(1), y = c.output(0);
  const auto& at = c.attrs<axon_matmul_attrs>();
  const bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  sdk::require(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX,
               sdk::format("%s: a %s and b %s are too large for cuBLAS (dimensions up to 2^31-1)", c.op(),
                           a.shape_string().c_str(), b.shape_string().c_str()));
  if (m == 0 || n == 0) return;
  if (k == 0) {
    CUDA_CHECK(cudaMemsetAsync(y.raw(), 0, y.numel() * sizeof(float), d.stream()));
    return;
  }
  const float one = 1.f, zero = 0.f;
  const int lda = static_cast<int>(a.dim(1)), ldb = static_cast<int>(b.dim(1));
  CUBLAS_CHECK(cublasSgemm(d.cublas(), tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
                           static_cast<int>(m), static_cast<int>(k), &one, b.data<float>(), ldb, a.data<float>(), lda, &zero,
                           y.data<float>(), static_cast<int>(n)));
}

}  // namespace

void register_matmul_kernels(sdk::KernelTable& t) { add<OpId::MatMul, matmul>(t); }

}  // namespace axon::cuda
