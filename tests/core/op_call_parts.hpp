// Parts of hand-written op calls for the op table's tests (validator,
// op_cost): tensors that carry only a shape, and the attributes of
// convolutions and pooling with square windows and strides.
#pragma once

#include <axon/plugin_abi.h>

#include <cstdint>
#include <vector>

namespace axon::test {

// Every tensor points here: the validator and op_cost read shapes only.
inline float g_shape_only_data[1];

inline axon_tensor tensor(std::vector<int64_t> dims, axon_dtype dtype = AXON_FLOAT32) {
  axon_tensor t{};
  t.data = g_shape_only_data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  return t;
}

inline axon_conv2d_attrs conv(int stride, axon_padding p) {
  axon_conv2d_attrs a{};
  a.struct_size = sizeof a;
  a.stride_h = a.stride_w = stride;
  a.dilation_h = a.dilation_w = 1;
  a.padding = p;
  return a;
}

inline axon_pool_attrs pool(int window, int stride, axon_padding p) {
  axon_pool_attrs a{};
  a.struct_size = sizeof a;
  a.window_h = a.window_w = window;
  a.stride_h = a.stride_w = stride;
  a.padding = p;
  return a;
}

}  // namespace axon::test
