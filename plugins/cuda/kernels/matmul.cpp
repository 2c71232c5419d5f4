// MatMul on cuBLAS. axon's matrices are row-major; cuBLAS is column-major, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with no copies.
#include "cuda_device.hpp"

namespace axon::cuda {

namespace {

void matmul(CudaDevice& d, const sdk::KernelCall& c) {
  c.expect_arity(2, 1);
  auto a = c.input(0), b = c.input(1), y = c.output(0);
  for (auto* t : {&a, &b, &y}) expect_dtype(c, *t, AXON_FLOAT32, "every tensor");
  const auto& at = c.attrs<axon_matmul_attrs>();
  sdk::require(a.rank() == 2 && b.rank() == 2 && y.rank() == 2,
               sdk::format("%s: a, b and c must be 2-D, got %s, %s, %s", c.op(), a.shape_string().c_str(),
                           b.shape_string().c_str(), y.shape_string().c_str()));
  const bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  sdk::require(k == kb, sdk::format("%s: inner dimensions differ: a %s%s, b %s%s", c.op(), a.shape_string().c_str(),
                                    ta ? "^T" : "", b.shape_string().c_str(), tb ? "^T" : ""));
  sdk::require(y.dim(0) == m && y.dim(1) == n, sdk::format("%s: c must be [%lld,%lld], got %s", c.op(), (long long)m,
                                                           (long long)n, y.shape_string().c_str()));
  sdk::require(m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX, sdk::format("%s: matrix too large for cuBLAS", c.op()));
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

void register_matmul_kernels(sdk::KernelTable& t) { t.add("MatMul", AXON_FLOAT32, cuda_kernel<matmul>); }

}  // namespace axon::cuda
