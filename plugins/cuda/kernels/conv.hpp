// cuDNN's backend (graph) API for each convolution shape: the operation graph
// and the chosen engine's execution plan, made on first use and kept for the
// life of the device (no search per step; a call only binds its pointers).
// The legacy API cost the host 23-99 us a call at the trainer's shapes, the
// plan 5-27 us, on an H200 (bench/cuda/bench_cudnn_calls.cpp).
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace axon::cuda {

// One cuDNN backend descriptor, destroyed with its owner.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  BackendDescriptor& operator=(BackendDescriptor&& o) noexcept {
    std::swap(d_, o.d_);
    return *this;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  const cudnnBackendDescriptor_t* address() const { return &d_; }
  // cudnnBackendSetAttribute, throwing on failure.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const void* values);
  void finalize(const char* what);

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

struct ConvPlan {
  cudnnTensorFormat_t layout = CUDNN_TENSOR_NHWC;  // NHWC (KRSC filter) or NCHW (KCRS filter)
  // The tensors, convolution, operation and graph the engines were chosen for.
  std::vector<BackendDescriptor> graph;
  // Every engine configuration cuDNN's heuristics offer that the math policy
  // allows, best first, with its engine's global index; `chosen` indexes it.
  // Those cuDNN cannot make a plan of for this graph, or whose workspace is
  // too large, are passed over; if it refuses the chosen one at run time, or
  // its workspace does not fit in the memory left, the next that does is
  // taken and kept.
  struct Candidate {
    BackendDescriptor config;
    int64_t engine = -1;
  };
  std::vector<Candidate> candidates;
  size_t chosen = 0;
  BackendDescriptor plan;  // the chosen candidate's execution plan
  size_t workspace = 0;
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  int64_t engine() const { return candidates[chosen].engine; }
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
