// After each launch of axon's own kernels: a launch that failed (a bad
// configuration, no kernel image for the device) becomes the exception the
// op call reports, naming the kernel.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace axon::cuda::launch {

inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + " launch failed: " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

}  // namespace axon::cuda::launch
