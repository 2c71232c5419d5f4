// The one place the CPU plugin talks to the BLAS library (OpenBLAS, loaded at
// run time: see openblas.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace axon::cpu {

// Row-major C = op(A) * op(B) + beta * C (alpha = 1), single-threaded: the
// plugin splits work over its own threads, so the BLAS library runs one
// thread per call and the two never oversubscribe the cores.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
           int64_t ldb, float beta, float* c, int64_t ldc);

// Loads OpenBLAS and puts it in single-threaded mode. Returns "" on success,
// else why it failed (the plugin then offers no devices).
std::string blas_init();

// "OpenBLAS 0.3.21 ... SkylakeX ..., OPENBLAS_CORETYPE=... (set by ...)".
std::string blas_description();

}  // namespace axon::cpu
