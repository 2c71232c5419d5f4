// A dense tensor in one device's memory. Copies share the buffer (like a
// TensorFlow tensor handle); clone() copies data. Shapes are NHWC for images.
// A view is a tensor over part of another's buffer (an element offset and a
// shape): the model keeps all its parameters in one buffer per device and
// hands each layer a view, so one collective or one optimizer op covers them.
#pragma once

#include <axon/device.hpp>
#include <axon/op_table.hpp>  // dtype_size, dtype_name
#include <axon/plugin_abi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace axon {

using Shape = std::vector<int64_t>;

std::string shape_string(const Shape& s);  // "[64,28,28,1]"
int64_t numel(const Shape& s);

class Tensor {
 public:
  Tensor() = default;  // empty: no device, numel 0
  Tensor(Device& device, axon_dtype dtype, Shape shape);  // uninitialised memory

  bool defined() const { return buffer_ != nullptr; }
  // No other tensor (a copy or a view) shares the buffer: writing into it
  // changes no one else's values.
  bool sole_handle() const { return buffer_ != nullptr && buffer_.use_count() == 1; }
  Device& device() const;
  axon_dtype dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? shape_.size() + i : i]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const;
  size_t bytes() const;
  void* data() const;  // device pointer

  // Same buffer, new shape with equal numel (Flatten). Throws on mismatch.
  Tensor reshaped(Shape shape) const;
  // The elements [offset, offset + numel(shape)) of this tensor as a tensor of
  // `shape`, sharing the buffer. Throws UsageError when they do not fit.
  Tensor view(int64_t offset, Shape shape) const;
  // A new tensor with the same contents on `device` (or this device).
  Tensor to(Device& device) const;
  Tensor clone() const;

  void copy_from_host(const void* src, size_t bytes);
  void copy_to_host(void* dst, size_t bytes) const;
  template <class T>
  std::vector<T> to_vector() const {
    std::vector<T> v(static_cast<size_t>(numel()));
    copy_to_host(v.data(), v.size() * sizeof(T));
    return v;
  }
  // The one element of a scalar or one-element tensor (TensorFlow's
  // .numpy().item()); UsageError naming the shape (or the dtype, when T's
  // size differs from it) otherwise.
  template <class T>
  T item() const {
    check_item(sizeof(T));
    T v{};
    copy_to_host(&v, sizeof v);
    return v;
  }
  template <class T>
  static Tensor from_vector(Device& device, axon_dtype dtype, Shape shape, std::span<const T> values) {
    Tensor t(device, dtype, std::move(shape));
    t.copy_from_host(values.data(), values.size_bytes());
    return t;
  }

  // The ABI view passed to kernels.
  axon_tensor c_view() const;

  struct Buffer;

 private:
  friend class TensorPool;
  Tensor(std::shared_ptr<Buffer> buffer, axon_dtype dtype, Shape shape);
  void check_item(size_t bytes) const;

  std::shared_ptr<Buffer> buffer_;
  size_t offset_ = 0;  // bytes into the buffer (views)
  axon_dtype dtype_ = AXON_FLOAT32;
  Shape shape_;
};

}  // namespace axon
