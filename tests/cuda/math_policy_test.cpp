// The CUDA plugin's float32 math policy (plugins/cuda/kernels/math_policy.hpp),
// on cuDNN's and cuBLAS's own enums without a GPU: what TF32 and determinism
// let through, and that down-conversion to FP16 is never chosen.
#include <catch2/catch.hpp>

#include "math_policy.hpp"

#include <vector>

using namespace axon::cuda;

namespace {

using Notes = std::vector<cudnnBackendNumericalNote_t>;

// Engines as cuDNN's heuristics note them, covering each way one can be dropped.
const Notes kPlain = {};
const Notes kWinograd = {CUDNN_NUMERICAL_NOTE_WINOGRAD, CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4};
const Notes kFft = {CUDNN_NUMERICAL_NOTE_FFT};
const Notes kTf32 = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE};
const Notes kNondeterministic = {CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC};
const Notes kFp16 = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS};
const Notes kHalfSums = {CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION};

}  // namespace

TEST_CASE("cuDNN engines: plain, FFT and Winograd float32 math always runs", "[cuda][math]") {
  for (bool tf32 : {false, true})
    for (bool deterministic : {false, true}) {
      const MathPolicy p{tf32, deterministic};
      CHECK(engine_allowed(kPlain, p));
      CHECK(engine_allowed(kWinograd, p));
      CHECK(engine_allowed(kFft, p));
    }
}

TEST_CASE("cuDNN engines: tensor cores (TF32) only when allowed, down-conversion never", "[cuda][math]") {
  const MathPolicy off{false, false}, on{true, false};
  CHECK_FALSE(engine_allowed(kTf32, off));
  CHECK(engine_allowed(kTf32, on));
  for (const MathPolicy& p : {off, on}) {
    CHECK_FALSE(engine_allowed(kFp16, p));
    CHECK_FALSE(engine_allowed(kHalfSums, p));
  }
}

TEST_CASE("cuDNN engines: non-deterministic ones only when determinism is not asked for", "[cuda][math]") {
  CHECK(engine_allowed(kNondeterministic, MathPolicy{false, false}));
  CHECK_FALSE(engine_allowed(kNondeterministic, MathPolicy{false, true}));
  CHECK_FALSE(engine_allowed({CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC},
                             MathPolicy{true, true}));
}

TEST_CASE("cuBLAS math mode and cuBLASLt compute type", "[cuda][math]") {
  const MathPolicy off{false, false}, on{true, false};
  CHECK(cublas_math(off) == CUBLAS_DEFAULT_MATH);
  CHECK(cublas_math(on) == CUBLAS_TF32_TENSOR_OP_MATH);
  CHECK(cublaslt_compute(off) == CUBLAS_COMPUTE_32F);
  CHECK(cublaslt_compute(on) == CUBLAS_COMPUTE_32F_FAST_TF32);
  for (const MathPolicy& p : {off, on}) CHECK(cublas_math(p) != CUBLAS_TENSOR_OP_MATH);  // FP16 compute
}
