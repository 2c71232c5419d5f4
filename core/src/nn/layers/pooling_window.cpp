#include "pooling_window.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

#include <string>

namespace axon::nn {

axon_pool_attrs pool_window(const char* type, Size2 pool_size, std::optional<Size2> strides, axon_padding padding) {
  const Size2 s = strides.value_or(pool_size);
  if (pool_size.h <= 0 || pool_size.w <= 0 || s.h <= 0 || s.w <= 0)
    throw UsageError(std::string(type) + ": pool size and strides must be positive");
  return ops::pool_attrs(pool_size.h, pool_size.w, s.h, s.w, padding);
}

void write_pool_window(KerasConfigWriter& c, const axon_pool_attrs& attrs) {
  c.integers("pool_size", {attrs.window_h, attrs.window_w});
  c.integers("strides", {attrs.stride_h, attrs.stride_w});
  c.string("padding", attrs.padding == AXON_PADDING_SAME ? "same" : "valid");
  c.string("data_format", "channels_last");
}

Shape pooled_shape(const axon_pool_attrs& attrs, const Shape& s) {
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  const WindowAxis h = window_axis(s[0], attrs.window_h, attrs.stride_h, 1, attrs.padding);
  const WindowAxis w = window_axis(s[1], attrs.window_w, attrs.stride_w, 1, attrs.padding);
  if (h.out < 1 || w.out < 1) throw UsageError("its pool is larger than its input " + shape_string(s));
  return {h.out, w.out, s[2]};
}

KerasPoolWindow pool_window_from_keras(const KerasLayerConfig& l) {
  const auto p = l.pair("pool_size", 1, limits::kMaxImageSide, {2, 2});
  const auto s = l.pair("strides", 1, limits::kMaxImageSide, p);
  return {Size2(static_cast<int>(p.first), static_cast<int>(p.second)),
          Size2(static_cast<int>(s.first), static_cast<int>(s.second)), l.padding()};
}

}  // namespace axon::nn
