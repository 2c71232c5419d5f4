// What cuDNN and cuBLAS may do with float32 data, from two settings:
// `allow-tf32` (TF32 tensor cores allowed) and `deterministic` (the same
// inputs give the same bits on every run). Whatever the settings, float32 is
// never down-converted to FP16/BF16: cuDNN's *_ALLOW_CONVERSION math and
// cuBLAS's TENSOR_OP (= FAST_16F) math are never chosen. Host-only
// decisions, tested without a GPU (tests/cuda/math_policy_test.cpp).
#pragma once

#include <cublas_api.h>
#include <cudnn.h>

#include <cstddef>
#include <utility>
#include <vector>

namespace axon::cuda {

struct MathPolicy {
  bool allow_tf32 = false;
  bool deterministic = false;
  size_t max_workspace = 0;  // bytes; cuDNN algorithms needing more are skipped
};

// The convolution descriptor's math type when asking cuDNN for algorithms:
// plain FP32 FMA, or tensor-op math, which uses TF32 for float32 data and
// never converts it down.
inline cudnnMathType_t descriptor_math(const MathPolicy& p) {
  return p.allow_tf32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

// Whether an algorithm offered with math type `m` may run.
inline bool math_allowed(cudnnMathType_t m, const MathPolicy& p) {
  if (m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) return false;  // float32 -> FP16: never
  return p.allow_tf32 || m == CUDNN_FMA_MATH || m == CUDNN_DEFAULT_MATH;
}

// The math type an allowed algorithm runs with: default math would permit
// TF32 on Ampere and later, so it becomes FMA while TF32 is off.
inline cudnnMathType_t run_math(cudnnMathType_t offered, const MathPolicy& p) {
  return !p.allow_tf32 && offered == CUDNN_DEFAULT_MATH ? CUDNN_FMA_MATH : offered;
}

// The usable algorithms among cuDNN's offers (cudnnGet/FindConvolution*_v7
// results, best first), in cuDNN's order, each with the math type to run it
// with: it succeeded, its math is allowed, its workspace fits, and, when
// determinism is asked for, cuDNN marks it CUDNN_DETERMINISTIC.
template <class Perf>
std::vector<std::pair<int, cudnnMathType_t>> usable_algorithms(const Perf* offers, int count, const MathPolicy& p) {
  std::vector<std::pair<int, cudnnMathType_t>> out;
  for (int i = 0; i < count; ++i) {
    const Perf& o = offers[i];
    if (o.status != CUDNN_STATUS_SUCCESS || !math_allowed(o.mathType, p) || o.memory > p.max_workspace) continue;
    if (p.deterministic && o.determinism != CUDNN_DETERMINISTIC) continue;
    out.emplace_back(static_cast<int>(o.algo), run_math(o.mathType, p));
  }
  return out;
}

// cuBLAS's math mode for float32 products: TF32 tensor cores when allowed,
// else plain FP32. Never CUBLAS_TENSOR_OP_MATH, which means FP16 compute.
inline cublasMath_t cublas_math(const MathPolicy& p) {
  return p.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

}  // namespace axon::cuda
