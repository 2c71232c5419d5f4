// A tensor's device memory: allocated from its device, or lent by a
// TensorPool (returned to it, not freed, when the last handle goes).
#pragma once

#include <axon/tensor.hpp>
#include <axon/tensor_pool.hpp>

#include <cstddef>
#include <memory>

namespace axon {

// The bytes of a tensor of this dtype and shape; UsageError for a rank,
// dimension or dtype no tensor may have, or a size memory cannot hold.
size_t checked_tensor_bytes(axon_dtype dtype, const Shape& shape);

struct Tensor::Buffer {
  Device* device;
  void* data;
  size_t bytes;
  std::shared_ptr<TensorPool::State> pool;  // set for pooled memory

  Buffer(Device& d, size_t n) : device(&d), data(n ? d.allocate(n) : nullptr), bytes(n) {}
  Buffer(Device& d, void* p, size_t n, std::shared_ptr<TensorPool::State> from)
      : device(&d), data(p), bytes(n), pool(std::move(from)) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

}  // namespace axon
