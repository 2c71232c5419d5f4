// Tensors: a shared device buffer plus dtype and shape.
#include "tensor_buffer.hpp"

#include <axon/error.hpp>
#include <axon/tensor.hpp>

#include <cstddef>
#include <vector>

namespace axon {

std::string shape_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) { if (i) out += ','; out += std::to_string(s[i]); }
  return out + "]";
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw UsageError("negative dimension in shape " + shape_string(s));
    if (__builtin_mul_overflow(n, d, &n))
      throw UsageError("shape " + shape_string(s) + " has more elements than a 64-bit count holds");
  }
  return n;
}

size_t checked_tensor_bytes(axon_dtype dtype, const Shape& shape) {
  if (shape.size() > AXON_MAX_RANK)
    throw UsageError("tensor rank " + std::to_string(shape.size()) + " exceeds " + std::to_string(AXON_MAX_RANK));
  for (int64_t d : shape)
    if (d < 0) throw UsageError("negative dimension in shape " + shape_string(shape));
  if (dtype_size(dtype) == 0) throw UsageError("unknown dtype " + std::to_string(static_cast<int>(dtype)));
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(axon::numel(shape)), dtype_size(dtype), &bytes))
    throw UsageError("tensor " + shape_string(shape) + " of " + dtype_name(dtype) + " has more bytes than memory holds");
  return bytes;
}

Tensor::Tensor(Device& device, axon_dtype dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  buffer_ = std::make_shared<Buffer>(device, checked_tensor_bytes(dtype_, shape_));
}

Tensor::Tensor(std::shared_ptr<Buffer> buffer, axon_dtype dtype, Shape shape)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(std::move(shape)) {}

Device& Tensor::device() const {
  if (!buffer_) throw RuntimeError("empty tensor has no device");
  return *buffer_->device;
}

int64_t Tensor::numel() const { return buffer_ ? axon::numel(shape_) : 0; }
size_t Tensor::bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
void* Tensor::data() const { return buffer_ && buffer_->data ? static_cast<char*>(buffer_->data) + offset_ : nullptr; }

void Tensor::check_item(size_t bytes) const {
  if (numel() != 1) throw UsageError("item() needs a tensor of one element, got shape " + shape_string(shape_));
  if (bytes != dtype_size(dtype_))
    throw UsageError(std::string("item(): the tensor is ") + dtype_name(dtype_) + ", not a type of " +
                     std::to_string(bytes) + " bytes");
}

Tensor Tensor::reshaped(Shape shape) const {
  if (axon::numel(shape) != numel())
    throw UsageError("cannot reshape " + shape_string(shape_) + " to " + shape_string(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::view(int64_t offset, Shape shape) const {
  const int64_t n = numel();
  for (int64_t d : shape)
    if (d < 0) throw UsageError("negative dimension in view shape " + shape_string(shape));
  if (shape.size() > AXON_MAX_RANK) throw UsageError("view rank " + std::to_string(shape.size()) + " exceeds " +
                                                    std::to_string(AXON_MAX_RANK));
  const int64_t m = axon::numel(shape);
  if (offset < 0 || offset > n || m > n - offset)
    throw UsageError("view of " + std::to_string(m) + " elements at offset " + std::to_string(offset) +
                     " does not fit a tensor of " + std::to_string(n) + " elements " + shape_string(shape_));
  Tensor t = *this;
  t.offset_ = offset_ + static_cast<size_t>(offset) * dtype_size(dtype_);
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::to(Device& device) const {
  Tensor t(device, dtype_, shape_);
  if (bytes() == 0) return t;
  if (&device == &this->device()) {
    device.copy_device_to_device(t.data(), data(), bytes());
  } else {
    // Across devices (and plugins) the only common ground is host memory.
    std::vector<std::byte> host(bytes());
    this->device().copy_device_to_host(host.data(), data(), bytes());
    device.copy_host_to_device(t.data(), host.data(), bytes());
  }
  return t;
}

Tensor Tensor::clone() const { return to(device()); }

void Tensor::copy_from_host(const void* src, size_t n) {
  if (n != bytes())
    throw UsageError("copy_from_host: " + std::to_string(n) + " bytes given for a tensor of " +
                     std::to_string(bytes()) + " bytes " + shape_string(shape_));
  if (n) device().copy_host_to_device(data(), src, n);
}

void Tensor::copy_to_host(void* dst, size_t n) const {
  if (n != bytes())
    throw UsageError("copy_to_host: " + std::to_string(n) + " bytes asked of a tensor of " +
                     std::to_string(bytes()) + " bytes " + shape_string(shape_));
  if (n) device().copy_device_to_host(dst, data(), n);
}

axon_tensor Tensor::c_view() const {
  axon_tensor t{};
  t.data = data();
  t.dtype = dtype_;
  t.rank = rank();
  for (int i = 0; i < t.rank; ++i) t.dims[i] = shape_[static_cast<size_t>(i)];
  return t;
}

}  // namespace axon
