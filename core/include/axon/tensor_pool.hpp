// Reusable device memory for the tensors of a training step. A tensor taken
// from the pool returns its memory to the pool when its last handle goes, and
// the next take of the same size gets it back: after the first step of each
// batch size, a step allocates nothing on the device, while every activation
// and gradient lives only as long as something still needs it (PyTorch's
// caching allocator, per device and exact size). Safe for stream-ordered
// devices as long as one stream uses the pool's tensors, as a replica's does.
#pragma once

#include <axon/tensor.hpp>

#include <cstdint>
#include <memory>

namespace axon {

class TensorPool {
 public:
  explicit TensorPool(Device& device);
  Device& device() const;

  // An uninitialised tensor whose memory comes from (and goes back to) the pool.
  Tensor take(axon_dtype dtype, Shape shape);

  // The most bytes of taken tensors alive at once, and the bytes the pool
  // holds on the device (taken + cached).
  int64_t peak_bytes() const;
  int64_t held_bytes() const;
  // Returns the cached (free) blocks to the device.
  void release_cached();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// While a PoolScope lives, the temporaries that code under a layer needs
// (dispatch running a fused op as its parts) come from its pool when they
// are on the pool's device, so a replica's step after its first allocates
// nothing there either. Scopes nest, per thread.
class PoolScope {
 public:
  explicit PoolScope(TensorPool& pool);
  ~PoolScope();
  PoolScope(const PoolScope&) = delete;
  PoolScope& operator=(const PoolScope&) = delete;

 private:
  TensorPool* previous_;
};

// An uninitialised tensor of like's device, dtype and shape: from the pool of
// this thread's innermost PoolScope when that pool is on like's device,
// otherwise allocated as any tensor.
Tensor scratch_like(const Tensor& like);

}  // namespace axon
