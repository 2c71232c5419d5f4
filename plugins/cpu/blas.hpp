// The one place the CPU plugin talks to the BLAS library.
#pragma once

#include <cstdint>

namespace axon::cpu {

// Row-major C = op(A) * op(B) + beta * C (alpha = 1), single-threaded: the
// plugin splits work over its own threads, so the BLAS library runs one
// thread per call and the two never oversubscribe the cores.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc);

// Puts the BLAS library in single-threaded mode; returns its description
// ("OpenBLAS 0.3.21 ...") for the device properties.
const char* blas_init();

}  // namespace axon::cpu
