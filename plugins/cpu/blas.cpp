#include "blas.hpp"

#include "openblas.hpp"

namespace axon::cpu {

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  static const auto fn = openblas().sgemm;  // blas_init() has loaded it
  // BLAS rejects leading dimensions below 1 even when the matrix is empty.
  auto ld = [](int64_t v) { return static_cast<int>(v < 1 ? 1 : v); };
  fn(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, static_cast<int>(m),
     static_cast<int>(n), static_cast<int>(k), 1.0f, a, ld(lda), b, ld(ldb), beta, c, ld(ldc));
}

std::string blas_init() {
  const OpenBlas& b = openblas();
  if (!b.ok()) return b.error;
  b.set_num_threads(1);
  return {};
}

std::string blas_description() {
  const OpenBlas& b = openblas();
  if (!b.ok()) return b.error;
  std::string s = b.get_config();
  if (!b.coretype.empty()) s += ", " + b.coretype;
  return s;
}

}  // namespace axon::cpu
