// cuDNN's legacy API counts a tensor's elements in int: it takes at most
// 2^31 - 1 per tensor. Kernels check the tensors they hand it first, so a
// larger one fails with one message naming the op, the tensor and its shape.
#pragma once

#include <axon/plugin.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>

namespace axon::cuda {

constexpr int64_t kCudnnMaxElements = INT32_MAX;

inline void require_cudnn_size(const char* op, const char* tensor, std::initializer_list<int64_t> dims) {
  int64_t n = 1;
  std::string shape = "[";
  for (int64_t d : dims) {
    n *= d;
    if (shape.size() > 1) shape += ',';
    shape += std::to_string(d);
  }
  shape += "]";
  if (n > kCudnnMaxElements)
    sdk::fail(AXON_INVALID_ARGUMENT,
              sdk::format("%s: %s %s has %lld elements; cuDNN takes at most 2^31 - 1 (%lld) per "
                          "tensor: use a smaller batch",
                          op, tensor, shape.c_str(), (long long)n, (long long)kCudnnMaxElements));
}

}  // namespace axon::cuda
