// The CUDA plugin's float32 math policy (plugins/cuda/kernels/math_policy.hpp),
// on cuDNN's and cuBLAS's own enums without a GPU: what TF32 and determinism
// let through, and that down-conversion to FP16 is never chosen.
#include <catch2/catch.hpp>

#include "math_policy.hpp"

#include <utility>
#include <vector>

using namespace axon::cuda;

namespace {

using Algos = std::vector<std::pair<int, cudnnMathType_t>>;

cudnnConvolutionFwdAlgoPerf_t offer(int algo, cudnnMathType_t math, cudnnDeterminism_t det, size_t memory = 0,
                                    cudnnStatus_t status = CUDNN_STATUS_SUCCESS) {
  cudnnConvolutionFwdAlgoPerf_t p{};
  p.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
  p.status = status;
  p.memory = memory;
  p.determinism = det;
  p.mathType = math;
  return p;
}

// cuDNN's offers, best first, covering each way an offer can be dropped.
const std::vector<cudnnConvolutionFwdAlgoPerf_t> kOffers = {
    offer(7, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, CUDNN_DETERMINISTIC),  // FP16: never
    offer(6, CUDNN_TENSOR_OP_MATH, CUDNN_NON_DETERMINISTIC),               // TF32, not deterministic
    offer(1, CUDNN_TENSOR_OP_MATH, CUDNN_DETERMINISTIC),                   // TF32, deterministic
    offer(5, CUDNN_DEFAULT_MATH, CUDNN_NON_DETERMINISTIC),                 // default math: TF32 unless forced to FMA
    offer(2, CUDNN_FMA_MATH, CUDNN_DETERMINISTIC, size_t{2} << 30),       // workspace too large
    offer(3, CUDNN_FMA_MATH, CUDNN_DETERMINISTIC, 0, CUDNN_STATUS_NOT_SUPPORTED),
    offer(0, CUDNN_FMA_MATH, CUDNN_DETERMINISTIC),
};

Algos usable(bool tf32, bool deterministic) {
  MathPolicy p{tf32, deterministic, size_t{1} << 30};
  return usable_algorithms(kOffers.data(), static_cast<int>(kOffers.size()), p);
}

}  // namespace

TEST_CASE("cuDNN algorithms: TF32 off keeps FP32 math only, in cuDNN's order", "[cuda][math]") {
  CHECK(usable(false, false) == Algos{{5, CUDNN_FMA_MATH}, {0, CUDNN_FMA_MATH}});
  CHECK(usable(false, true) == Algos{{0, CUDNN_FMA_MATH}});
}

TEST_CASE("cuDNN algorithms: TF32 allowed adds tensor-op math, never down-conversion", "[cuda][math]") {
  CHECK(usable(true, false) == Algos{{6, CUDNN_TENSOR_OP_MATH}, {1, CUDNN_TENSOR_OP_MATH}, {5, CUDNN_DEFAULT_MATH},
                                     {0, CUDNN_FMA_MATH}});
  CHECK(usable(true, true) == Algos{{1, CUDNN_TENSOR_OP_MATH}, {0, CUDNN_FMA_MATH}});
  for (bool tf32 : {false, true}) {
    MathPolicy p{tf32, false, 0};
    CHECK_FALSE(math_allowed(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, p));
    CHECK(descriptor_math(p) != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION);
    CHECK(cublas_math(p) != CUBLAS_TENSOR_OP_MATH);  // FP16 compute
  }
}

TEST_CASE("math types set on the descriptor and on cuBLAS", "[cuda][math]") {
  const MathPolicy off{false, false, 0}, on{true, false, 0};
  CHECK(descriptor_math(off) == CUDNN_FMA_MATH);
  CHECK(descriptor_math(on) == CUDNN_TENSOR_OP_MATH);
  CHECK(run_math(CUDNN_DEFAULT_MATH, off) == CUDNN_FMA_MATH);
  CHECK(run_math(CUDNN_DEFAULT_MATH, on) == CUDNN_DEFAULT_MATH);
  CHECK(cublas_math(off) == CUBLAS_DEFAULT_MATH);
  CHECK(cublas_math(on) == CUBLAS_TF32_TENSOR_OP_MATH);
}

TEST_CASE("cuDNN algorithms: the backward perf structs go through the same filter", "[cuda][math]") {
  cudnnConvolutionBwdFilterAlgoPerf_t f[2]{};
  f[0].algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;  // cuDNN marks it non-deterministic
  f[0].status = CUDNN_STATUS_SUCCESS;
  f[0].determinism = CUDNN_NON_DETERMINISTIC;
  f[0].mathType = CUDNN_FMA_MATH;
  f[1] = f[0];
  f[1].algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  f[1].determinism = CUDNN_DETERMINISTIC;
  const MathPolicy det{false, true, 0}, any{false, false, 0};
  CHECK(usable_algorithms(f, 2, det) == Algos{{CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_FMA_MATH}});
  CHECK(usable_algorithms(f, 2, any).size() == 2);
}
