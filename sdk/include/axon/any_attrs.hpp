// One value holding any attribute struct of the ABI, for code that builds
// calls of any op (tools, tests, benchmarks): assign the struct the op
// takes, pass attrs_ptr() as axon_kernel_call.attrs. The alternatives are in
// AttrKind's order, so the index is the kind.
#pragma once

#include <axon/op_table.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>

namespace axon {

using AnyAttrs =
    std::variant<std::monostate, axon_conv2d_attrs, axon_pool_attrs, axon_matmul_attrs, axon_adam_attrs,
                 axon_fill_attrs, axon_scale_attrs, axon_fused_conv2d_attrs, axon_fused_matmul_attrs,
                 axon_fused_conv2d_max_pool_attrs, axon_leaky_relu_attrs, axon_clipped_relu_attrs, axon_gelu_attrs,
                 axon_concat_attrs, axon_slice_attrs, axon_batch_norm_attrs, axon_moving_average_attrs,
                 axon_fused_batch_norm_attrs, axon_sgd_attrs, axon_rmsprop_attrs, axon_adagrad_attrs,
                 axon_nadam_attrs, axon_weight_decay_attrs, axon_clip_attrs, axon_crossentropy_attrs,
                 axon_regression_loss_attrs, axon_binary_accuracy_attrs, axon_in_top_k_attrs, axon_random_attrs,
                 axon_reduce_attrs, axon_layer_norm_attrs>;

namespace detail {
template <class A>
constexpr size_t attr_kind_index() {
  if constexpr (std::is_same_v<A, std::monostate>)
    return 0;
  else
    return static_cast<size_t>(attr_kind_of<A>::value);
}
template <size_t... I>
constexpr bool any_attrs_in_kind_order(std::index_sequence<I...>) {
  return ((attr_kind_index<std::variant_alternative_t<I, AnyAttrs>>() == I) && ...);
}
}  // namespace detail
static_assert(std::variant_size_v<AnyAttrs> == static_cast<size_t>(AttrKind::layer_norm) + 1,
              "AnyAttrs holds every AttrKind");
static_assert(detail::any_attrs_in_kind_order(std::make_index_sequence<std::variant_size_v<AnyAttrs>>{}),
              "AnyAttrs' alternatives follow AttrKind's order");

inline AttrKind attr_kind(const AnyAttrs& a) { return static_cast<AttrKind>(a.index()); }

// The struct held (nullptr for none), for axon_kernel_call.attrs.
inline const void* attrs_ptr(const AnyAttrs& a) {
  return std::visit(
      [](const auto& v) -> const void* {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>)
          return nullptr;
        else
          return &v;
      },
      a);
}

// A zeroed struct of type A with its struct_size set, held in `a`.
template <class A>
A& emplace_attrs(AnyAttrs& a) {
  A& v = a.emplace<A>();
  v.struct_size = sizeof(A);
  return v;
}

}  // namespace axon
