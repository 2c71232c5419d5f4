// Eager tensors and ops, as TensorFlow runs them without a graph: each call
// runs the op at once on the device the scope says (axon::device) or the
// highest-priority device with a kernel, and returns a new tensor there.
// Inputs on another device are copied for you. Tensors are axon::Tensor
// (core/include/axon/tensor.hpp): shape(), dtype(), device(), to_vector<T>(),
// item<T>().
#pragma once

#include <axon/dispatch.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace axon {

// `with tf.device("/GPU:0"):` in C++: ops in this object's lifetime, on this
// thread, run on that device. Scopes nest (the inner one wins until it
// ends). A name that does not parse, or a device that does not exist, is a
// UsageError listing the devices there are; with soft placement (the
// default) a device that does not exist but parses ("/GPU:0" with no GPU)
// falls back to the CPU with one warning, as TensorFlow does.
class DeviceContext {
 public:
  explicit DeviceContext(const std::string& name);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  // The device ops in this scope run on ("/device:CPU:0").
  const std::string& device_name() const { return device_->name(); }

 private:
  Device* device_ = nullptr;
  std::unique_ptr<DeviceScope> scope_;
};
// auto scope = axon::device("/GPU:0");
[[nodiscard]] DeviceContext device(const std::string& name);

// tf.constant: float32 or int32 values of `shape` (numel must match), on the
// scope's device. A braced list of numbers is float32 ({1, 2, 3}); int32
// needs a std::vector<int32_t>.
Tensor constant(std::initializer_list<float> values, const Shape& shape);
Tensor constant(const std::vector<float>& values, const Shape& shape);
Tensor constant(const std::vector<int32_t>& values, const Shape& shape);
Tensor constant(float value);  // a scalar
Tensor zeros(const Shape& shape);
Tensor ones(const Shape& shape);
Tensor fill(const Shape& shape, float value);

// Elementwise, shapes equal (no broadcasting; a mismatch is a UsageError
// naming both shapes).
Tensor add(const Tensor& a, const Tensor& b);
Tensor subtract(const Tensor& a, const Tensor& b);
Tensor multiply(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
// [M, K] x [K, N] -> [M, N].
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a = false, bool transpose_b = false);
Tensor reshape(const Tensor& x, const Shape& shape);

// What print(tensor) shows in TensorFlow, with the device:
// "axon.Tensor(\n[[22 28]\n [49 64]], shape=(2, 2), dtype=float32, device=/device:CPU:0)".
// float32 and int32 values; other dtypes print their shape and dtype only.
std::string to_string(const Tensor& t);

namespace math {
// The sum of every element, a scalar (TensorFlow's reduce_sum without axis):
// the op table's Sum.
Tensor reduce_sum(const Tensor& x);
// The sum over `axis` (negative counts from the end; each at most once),
// those dimensions dropped, or kept as 1 with keepdims: the op table's
// ReduceSum (sums in double, rounded once). No axis: a copy of x.
Tensor reduce_sum(const Tensor& x, const std::vector<int>& axis, bool keepdims = false);
// The mean of every element, a scalar, and over `axis` as reduce_sum: Mean.
// Over no element: NaN (TensorFlow's answer).
Tensor reduce_mean(const Tensor& x);
Tensor reduce_mean(const Tensor& x, const std::vector<int>& axis, bool keepdims = false);
// The largest element, a scalar, and over `axis` as reduce_sum: Max (NaN
// propagates). Over no element: -inf (TensorFlow's answer).
Tensor reduce_max(const Tensor& x);
Tensor reduce_max(const Tensor& x, const std::vector<int>& axis, bool keepdims = false);
}  // namespace math

namespace nn {
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
// Over the last dimension.
Tensor softmax(const Tensor& logits);
// x [N, H, W, C], filters [KH, KW, C, F]; strides {sh, sw}; padding "VALID" or "SAME".
Tensor conv2d(const Tensor& x, const Tensor& filters, std::pair<int, int> strides = {1, 1},
              const std::string& padding = "VALID");
Tensor max_pool2d(const Tensor& x, std::pair<int, int> ksize, std::pair<int, int> strides,
                  const std::string& padding = "VALID");
Tensor bias_add(const Tensor& x, const Tensor& bias);
}  // namespace nn

}  // namespace axon
