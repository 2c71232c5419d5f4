// What cuDNN and cuBLAS may do with float32 data, from two settings:
// `allow-tf32` (TF32 tensor cores allowed) and `deterministic` (the same
// inputs give the same bits on every run). Whatever the settings, float32 is
// never down-converted to FP16/BF16: cuDNN engines noted DOWN_CONVERT_INPUTS
// and cuBLAS's TENSOR_OP (= FAST_16F) math are never chosen. Host-only
// decisions, tested without a GPU (tests/cuda/math_policy_test.cpp).
#pragma once

#include <cublas_api.h>
#include <cudnn.h>

#include <vector>

namespace axon::cuda {

struct MathPolicy {
  bool allow_tf32 = false;
  bool deterministic = false;
};

// Whether a cuDNN engine (backend API) may run, from its numerical notes:
// never one that converts float32 inputs down or reduces in lower precision;
// tensor cores (TF32 for float32) only when allowed; a non-deterministic one
// only when determinism is not asked for. FFT and Winograd engines may run
// (their rounding is within the GPU tolerance, docs/testing.md).
inline bool engine_allowed(const std::vector<cudnnBackendNumericalNote_t>& notes, const MathPolicy& p) {
  for (const cudnnBackendNumericalNote_t n : notes) {
    if (n == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS || n == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION)
      return false;
    if (n == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && !p.allow_tf32) return false;
    if (n == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && p.deterministic) return false;
  }
  return true;
}

// cuBLAS's math mode for float32 products: TF32 tensor cores when allowed,
// else plain FP32. Never CUBLAS_TENSOR_OP_MATH, which means FP16 compute.
inline cublasMath_t cublas_math(const MathPolicy& p) {
  return p.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

// cuBLASLt's compute type for float32 products (MatMul): TF32 tensor cores
// when allowed, else plain FP32; never a 16-bit one.
inline cublasComputeType_t cublaslt_compute(const MathPolicy& p) {
  return p.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

}  // namespace axon::cuda
