// cuDNN descriptors and the chosen algorithm for each convolution shape,
// created on first use and kept for the life of the device (no search per step).
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace axon::cuda {

struct ConvPlan {
  cudnnTensorFormat_t layout = CUDNN_TENSOR_NHWC;  // NHWC (KRSC filter) or NCHW (KCRS filter)
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;  // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t, by kind
  size_t workspace = 0;
  // Every usable algorithm from cuDNN's heuristics, best first, with its math
  // type; `chosen` indexes it. Candidates cuDNN does not support for these
  // descriptors (math type or workspace query refused) are passed over; if it
  // refuses the chosen one at run time, or its workspace does not fit in the
  // memory left, the next that does is taken and kept.
  std::vector<std::pair<int, cudnnMathType_t>> candidates;
  size_t chosen = 0;
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan();
};

// kind (0 forward, 1 backward data, 2 backward filter), N, H, W, C (input as
// given to cuDNN, i.e. after the asymmetric padding), the filter's last
// dimension, R, S, pad h/w, stride h/w, dilation h/w, tf32, deterministic,
// groups (C for a depthwise convolution, else 1).
using ConvKey = std::array<int64_t, 17>;

struct ConvPlans {
  std::map<ConvKey, std::unique_ptr<ConvPlan>> plans;
};

}  // namespace axon::cuda
