// Checks for every CUDA, cuDNN, cuBLAS and NCCL call (llm.c style): a failure
// throws axon::sdk::Error naming the call, file, line and the library's own
// error text; the SDK turns it into a status and message at the ABI boundary.
#pragma once

#include <axon/plugin.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

namespace axon::cuda {

inline const char* base_name(const char* path) {
  const char* s = std::strrchr(path, '/');
  return s ? s + 1 : path;
}

[[noreturn]] inline void fail_call(axon_status code, const char* lib_error, const char* call, const char* file, int line) {
  throw sdk::Error(code, sdk::format("%s failed at %s:%d: %s", call, base_name(file), line, lib_error));
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  std::string text = std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
  fail_call(e == cudaErrorMemoryAllocation ? AXON_OUT_OF_MEMORY : AXON_INTERNAL, text.c_str(), call, file, line);
}

inline void check_cudnn(cudnnStatus_t s, const char* call, const char* file, int line) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  char last[512] = {};
  cudnnGetLastErrorString(last, sizeof last);
  std::string text = cudnnGetErrorString(s);
  if (last[0]) text += std::string(": ") + last;
  fail_call(AXON_INTERNAL, text.c_str(), call, file, line);
}

inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::string text = std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")";
  fail_call(s == CUBLAS_STATUS_ALLOC_FAILED ? AXON_OUT_OF_MEMORY : AXON_INTERNAL, text.c_str(), call, file, line);
}

inline void check_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string text = ncclGetErrorString(r);
  if (const char* last = ncclGetLastError(nullptr); last && *last) text += std::string(": ") + last;
  fail_call(AXON_INTERNAL, text.c_str(), call, file, line);
}

}  // namespace axon::cuda

#define CUDA_CHECK(call) ::axon::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define CUDNN_CHECK(call) ::axon::cuda::check_cudnn((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::axon::cuda::check_cublas((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::axon::cuda::check_nccl((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors are reported at once, without a sync.
#define CUDA_CHECK_LAUNCH() ::axon::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
