#include "tensor_buffer.hpp"

#include <axon/tensor_pool.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace axon {

struct TensorPool::State {
  Device* device;
  std::mutex mutex;  // a buffer may die on another thread than the one that took it
  std::map<size_t, std::vector<void*>> free;  // cached blocks by exact size
  int64_t in_use = 0, peak = 0, cached = 0;

  explicit State(Device& d) : device(&d) {}
  ~State() { release_cached(); }

  void release_cached() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [bytes, blocks] : free)
      for (void* p : blocks) device->deallocate(p);
    free.clear();
    cached = 0;
  }
};

Tensor::Buffer::~Buffer() {
  if (!pool) {
    device->deallocate(data);
    return;
  }
  std::lock_guard<std::mutex> lock(pool->mutex);
  pool->in_use -= static_cast<int64_t>(bytes);
  if (data == nullptr) return;
  pool->free[bytes].push_back(data);
  pool->cached += static_cast<int64_t>(bytes);
}

TensorPool::TensorPool(Device& device) : state_(std::make_shared<State>(device)) {}

Device& TensorPool::device() const { return *state_->device; }

Tensor TensorPool::take(axon_dtype dtype, Shape shape) {
  const size_t bytes = checked_tensor_bytes(dtype, shape);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->free.find(bytes);
    if (it != state_->free.end() && !it->second.empty()) {
      data = it->second.back();
      it->second.pop_back();
      state_->cached -= static_cast<int64_t>(bytes);
    }
  }
  if (data == nullptr && bytes > 0) {
    try {
      data = state_->device->allocate(bytes);
    } catch (const std::exception&) {
      // Out of memory under a limit: what the pool caches may be what is missing.
      state_->release_cached();
      data = state_->device->allocate(bytes);
    }
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->in_use += static_cast<int64_t>(bytes);
    state_->peak = std::max(state_->peak, state_->in_use);
  }
  return Tensor(std::make_shared<Tensor::Buffer>(*state_->device, data, bytes, state_), dtype, std::move(shape));
}

int64_t TensorPool::peak_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->peak;
}
int64_t TensorPool::held_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->in_use + state_->cached;
}
void TensorPool::release_cached() { state_->release_cached(); }

namespace {
thread_local TensorPool* t_pool = nullptr;
}

PoolScope::PoolScope(TensorPool& pool) : previous_(t_pool) { t_pool = &pool; }
PoolScope::~PoolScope() { t_pool = previous_; }

Tensor scratch_like(const Tensor& like) {
  if (t_pool != nullptr && &t_pool->device() == &like.device()) return t_pool->take(like.dtype(), like.shape());
  return Tensor(like.device(), like.dtype(), like.shape());
}

}  // namespace axon
