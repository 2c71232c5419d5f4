// One validator for every op of the table (TensorFlow's shape functions): the
// host runs it once before each kernel, and a plugin may run it too (the
// SDK's KernelCall::validate). It checks the counts of inputs and outputs,
// every tensor's dtype, rank, dimensions and data pointer, the attribute
// struct's presence, size and values, and each op's shape rule. It formats a
// message only on failure, so a well-formed call costs a few comparisons.
#pragma once

#include <axon/op_geometry.hpp>
#include <axon/op_table.hpp>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

namespace axon {

namespace validate_detail {

inline std::string dims_string(const axon_tensor& t) {
  std::string s = "[";
  for (int i = 0; i < t.rank && i < AXON_MAX_RANK; ++i) (s += (i ? "," : "")) += std::to_string(t.dims[i]);
  return s + "]";
}

// An enum field read as the int the C side stored (any value may arrive).
template <class E>
int raw(const E& field) {
  int v = 0;
  static_assert(sizeof v == sizeof field, "C enums are ints");
  std::memcpy(&v, &field, sizeof v);
  return v;
}

class Validation {
 public:
  Validation(const OpSchema& s, const axon_kernel_call& c, std::string* why) : s_(s), c_(c), why_(why) {}

  bool fail(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (why_ != nullptr) {
      char buf[512];
      va_list ap;
      va_start(ap, fmt);
      std::vsnprintf(buf, sizeof buf, fmt, ap);
      va_end(ap);
      *why_ = std::string(s_.name) + ": " + buf;
    }
    return false;
  }

  const axon_tensor& in(int i) const { return c_.inputs[i]; }
  const axon_tensor& out(int i) const { return c_.outputs[i]; }
  const char* in_name(int i) const { return input_slot(s_, i).name; }
  const char* out_name(int i) const { return output_slot(s_, i).name; }

  bool rank_is(const axon_tensor& t, const char* name, int rank) {
    if (t.rank == rank) return true;
    return fail("%s must have rank %d, got shape %s", name, rank, dims_string(t).c_str());
  }
  bool shape_is(const axon_tensor& t, const char* name, std::initializer_list<int64_t> dims) {
    bool same = t.rank == static_cast<int>(dims.size());
    int i = 0;
    for (auto it = dims.begin(); same && it != dims.end(); ++it, ++i) same = t.dims[i] == *it;
    if (same) return true;
    std::string want = "[";
    i = 0;
    for (int64_t d : dims) (want += (i++ ? "," : "")) += std::to_string(d);
    return fail("%s has shape %s, expected %s", name, dims_string(t).c_str(), (want + "]").c_str());
  }
  bool same_shape(const axon_tensor& t, const char* name, const axon_tensor& like, const char* like_name) {
    bool same = t.rank == like.rank;
    for (int i = 0; same && i < t.rank; ++i) same = t.dims[i] == like.dims[i];
    if (same) return true;
    return fail("%s has shape %s, expected %s's %s", name, dims_string(t).c_str(), like_name, dims_string(like).c_str());
  }

  // Tensor slots: dtype, rank bounds, dims, data pointer.
  bool tensor(const axon_tensor& t, const char* name, axon_dtype want) {
    const int dt = raw(t.dtype);
    if (dt != static_cast<int>(want))
      return fail("%s must be %s, got %s", name, dtype_name(want),
                  dt >= 0 && dt < kDtypeCount ? dtype_name(static_cast<axon_dtype>(dt)) : "an unknown dtype");
    if (t.rank < 0 || t.rank > AXON_MAX_RANK) return fail("%s has invalid rank %d", name, t.rank);
    int64_t numel = 1;
    for (int i = 0; i < t.rank; ++i) {
      if (t.dims[i] < 0) return fail("%s has a negative dimension %s", name, dims_string(t).c_str());
      if (t.dims[i] != 0 && numel > INT64_MAX / t.dims[i])
        return fail("%s %s has more elements than fit in 64 bits", name, dims_string(t).c_str());
      numel *= t.dims[i];
    }
    if (numel > 0 && t.data == nullptr) return fail("%s %s has no data", name, dims_string(t).c_str());
    return true;
  }

  bool conv_attrs(const axon_conv2d_attrs& a, const char* what) {
    if (a.struct_size < attr_info(AttrKind::conv2d).min_size)
      return fail("%s attribute struct too small (%zu < %zu bytes)", what, a.struct_size,
                  attr_info(AttrKind::conv2d).min_size);
    if (a.stride_h < 1 || a.stride_w < 1) return fail("strides must be >= 1, got %d,%d", a.stride_h, a.stride_w);
    if (a.dilation_h < 1 || a.dilation_w < 1)
      return fail("dilations must be >= 1, got %d,%d", a.dilation_h, a.dilation_w);
    if (!padding_known(a.padding)) return fail("unknown padding %d", raw(a.padding));
    return true;
  }
  bool pool_attrs(const axon_pool_attrs& a) {
    if (a.struct_size < attr_info(AttrKind::pool).min_size)
      return fail("pool attribute struct too small (%zu < %zu bytes)", a.struct_size, attr_info(AttrKind::pool).min_size);
    if (a.window_h < 1 || a.window_w < 1) return fail("window must be >= 1, got %d,%d", a.window_h, a.window_w);
    if (a.stride_h < 1 || a.stride_w < 1) return fail("strides must be >= 1, got %d,%d", a.stride_h, a.stride_w);
    if (!padding_known(a.padding)) return fail("unknown padding %d", raw(a.padding));
    return true;
  }
  // Logits [N, C] need a class to take a softmax or a maximum over.
  bool has_classes(const axon_tensor& logits) {
    if (logits.dims[1] >= 1) return true;
    return fail("logits %s have no classes", dims_string(logits).c_str());
  }
  bool activation(int32_t act) {
    if (act == AXON_ACTIVATION_NONE || act == AXON_ACTIVATION_RELU) return true;
    return fail("unknown activation %d", act);
  }

  bool batch_norm_attrs(const axon_batch_norm_attrs& a) {
    if (!(a.epsilon > 0) || !finite(a.epsilon, "epsilon"))
      return fail("epsilon must be a positive number, got %g", static_cast<double>(a.epsilon));
    if (!(a.exponential_avg_factor >= 0 && a.exponential_avg_factor <= 1))
      return fail("exponential_avg_factor must be from 0 to 1, got %g", static_cast<double>(a.exponential_avg_factor));
    if (a.is_training != 0 && a.is_training != 1) return fail("is_training must be 0 or 1, got %d", a.is_training);
    return true;
  }

  // Rank-4 image and filter whose channels agree and whose windows fit.
  bool conv(const axon_conv2d_attrs& a, const axon_tensor& image, const char* image_name, const axon_tensor& filter,
            const char* filter_name, ConvGeometry* g) {
    if (!rank_is(image, image_name, 4) || !rank_is(filter, filter_name, 4)) return false;
    if (filter.dims[2] != image.dims[3])
      return fail("%s %s has %lld input channels, %s %s has %lld", filter_name, dims_string(filter).c_str(),
                  static_cast<long long>(filter.dims[2]), image_name, dims_string(image).c_str(),
                  static_cast<long long>(image.dims[3]));
    if (filter.dims[0] < 1 || filter.dims[1] < 1)
      return fail("%s %s has an empty window", filter_name, dims_string(filter).c_str());
    *g = conv_geometry(a, image, filter);
    return windows_fit(a.padding, image, filter.dims[0], filter.dims[1], a.dilation_h, a.dilation_w, image_name);
  }
  bool pool(const axon_pool_attrs& a, const axon_tensor& x, const char* name, PoolGeometry* g) {
    if (!rank_is(x, name, 4)) return false;
    *g = pool_geometry(a, x);
    return windows_fit(a.padding, x, a.window_h, a.window_w, 1, 1, name);
  }

  // Finite float attributes (NaN and Inf are refused unless said otherwise).
  bool finite(float x, const char* what) {
    if (x - x == 0.0f) return true;
    return fail("%s must be finite, got %g", what, static_cast<double>(x));
  }
  bool at_least_rank(const axon_tensor& t, const char* name, int rank) {
    if (t.rank >= rank) return true;
    return fail("%s must have rank >= %d, got shape %s", name, rank, dims_string(t).c_str());
  }
  // [C] per-channel vectors of an input whose last dimension is C.
  bool channels(const axon_tensor& t, const char* name, int64_t c) {
    if (t.rank == 1 && t.dims[0] == c) return true;
    return fail("%s has shape %s, expected [%lld] (one value per channel)", name, dims_string(t).c_str(),
                static_cast<long long>(c));
  }
  // Slice (`small` inside `large` at `begin`) and Pad (the other way round).
  bool placed_inside(const axon_slice_attrs& a, const axon_tensor& small, const char* small_name,
                     const axon_tensor& large, const char* large_name) {
    if (small.rank != large.rank)
      return fail("%s %s and %s %s have different ranks", small_name, dims_string(small).c_str(), large_name,
                  dims_string(large).c_str());
    for (int i = 0; i < small.rank; ++i)
      if (a.begin[i] < 0 || a.begin[i] > large.dims[i] - small.dims[i])
        return fail("%s %s does not fit in %s %s at begin[%d] = %lld", small_name, dims_string(small).c_str(),
                    large_name, dims_string(large).c_str(), i, static_cast<long long>(a.begin[i]));
    return true;
  }
  // ConcatV2: equal ranks, equal dims off the axis, y's axis the sum.
  bool concat(const axon_concat_attrs& a, const axon_kernel_call& c) {
    const axon_tensor& x0 = c.inputs[0];
    const axon_tensor& y = c.outputs[0];
    if (x0.rank < 1) return fail("x0 must have rank >= 1, got shape %s", dims_string(x0).c_str());
    if (a.axis < 0 || a.axis >= x0.rank) return fail("axis %d is outside x0's rank %d", a.axis, x0.rank);
    int64_t total = 0;
    for (int i = 0; i < c.num_inputs; ++i) {
      const axon_tensor& x = c.inputs[i];
      if (x.rank != x0.rank)
        return fail("x%d %s and x0 %s have different ranks", i, dims_string(x).c_str(), dims_string(x0).c_str());
      for (int d = 0; d < x.rank; ++d)
        if (d != a.axis && x.dims[d] != x0.dims[d])
          return fail("x%d %s and x0 %s differ off axis %d", i, dims_string(x).c_str(), dims_string(x0).c_str(),
                      a.axis);
      total += x.dims[a.axis];
    }
    bool same = y.rank == x0.rank;
    for (int d = 0; same && d < y.rank; ++d) same = y.dims[d] == (d == a.axis ? total : x0.dims[d]);
    if (same) return true;
    return fail("y has shape %s, expected x0's %s with %lld along axis %d", dims_string(y).c_str(),
                dims_string(x0).c_str(), static_cast<long long>(total), a.axis);
  }

  // The reductions of ABI 1.9: axes in [-rank, rank), none twice, and y x's
  // shape with the reduced axes 1 (keep_dims) or dropped.
  bool reduction(const axon_reduce_attrs& a, const axon_tensor& x, const axon_tensor& y) {
    if (a.keep_dims != 0 && a.keep_dims != 1) return fail("keep_dims must be 0 or 1, got %d", a.keep_dims);
    if (a.num_axes < 0 || a.num_axes > AXON_MAX_RANK)
      return fail("num_axes must be from 0 to %d, got %d", AXON_MAX_RANK, a.num_axes);
    bool reduced[AXON_MAX_RANK] = {};
    for (int i = 0; i < a.num_axes; ++i) {
      const int axis = a.axes[i], k = axis < 0 ? axis + x.rank : axis;
      if (k < 0 || k >= x.rank)
        return fail("axis %d is out of range for x %s (rank %d)", axis, dims_string(x).c_str(), x.rank);
      if (reduced[k]) return fail("axis %d is given twice for x %s", axis, dims_string(x).c_str());
      reduced[k] = true;
    }
    axon_tensor want{};
    for (int d = 0; d < x.rank; ++d)
      if (!reduced[d] || a.keep_dims) want.dims[want.rank++] = reduced[d] ? 1 : x.dims[d];
    bool same = y.rank == want.rank;
    for (int d = 0; same && d < y.rank; ++d) same = y.dims[d] == want.dims[d];
    if (same) return true;
    return fail("y has shape %s, expected %s (x %s reduced%s)", dims_string(y).c_str(), dims_string(want).c_str(),
                dims_string(x).c_str(), a.keep_dims ? " with keep_dims" : "");
  }

 private:
  // VALID padding needs the (dilated) window to fit in the input.
  bool windows_fit(const axon_padding& padding, const axon_tensor& x, int64_t kh, int64_t kw, int64_t dh, int64_t dw,
                   const char* name) {
    if (raw(padding) != AXON_PADDING_VALID) return true;
    const int64_t eh = (kh - 1) * dh + 1, ew = (kw - 1) * dw + 1;
    if (x.dims[1] >= eh && x.dims[2] >= ew) return true;
    return fail("window %lldx%lld (dilated %lldx%lld) is larger than %s %s with VALID padding",
                static_cast<long long>(kh), static_cast<long long>(kw), static_cast<long long>(eh),
                static_cast<long long>(ew), name, dims_string(x).c_str());
  }

  const OpSchema& s_;
  const axon_kernel_call& c_;
  std::string* why_;
};

// Each op's shape rule, after counts, dtypes and attributes passed.
inline bool shapes(Validation& v, const OpSchema& s, const axon_kernel_call& c) {
  auto& in = c.inputs;
  auto& out = c.outputs;
  switch (s.id) {
    case OpId::Conv2D: {
      ConvGeometry g;
      const auto& a = *static_cast<const axon_conv2d_attrs*>(c.attrs);
      return v.conv(a, in[0], "x", in[1], "filter", &g) && v.shape_is(out[0], "y", {g.n, g.oh, g.ow, g.oc});
    }
    case OpId::Conv2DBackpropInput: {
      ConvGeometry g;
      const auto& a = *static_cast<const axon_conv2d_attrs*>(c.attrs);
      return v.conv(a, out[0], "dx", in[1], "filter", &g) && v.shape_is(in[0], "dy", {g.n, g.oh, g.ow, g.oc});
    }
    case OpId::Conv2DBackpropInputAccumulate: {
      ConvGeometry g;
      const auto& a = *static_cast<const axon_conv2d_attrs*>(c.attrs);
      return v.conv(a, in[0], "dx", in[2], "filter", &g) && v.shape_is(in[1], "dy", {g.n, g.oh, g.ow, g.oc});
    }
    case OpId::Conv2DBackpropFilter: {
      ConvGeometry g;
      const auto& a = *static_cast<const axon_conv2d_attrs*>(c.attrs);
      return v.conv(a, in[0], "x", out[0], "dfilter", &g) && v.shape_is(in[1], "dy", {g.n, g.oh, g.ow, g.oc});
    }
    case OpId::MaxPool: {
      PoolGeometry g;
      return v.pool(*static_cast<const axon_pool_attrs*>(c.attrs), in[0], "x", &g) &&
             v.shape_is(out[0], "y", {g.n, g.oh, g.ow, g.c});
    }
    case OpId::MaxPoolGrad: {
      PoolGeometry g;
      return v.pool(*static_cast<const axon_pool_attrs*>(c.attrs), in[0], "x", &g) &&
             v.shape_is(in[1], "y", {g.n, g.oh, g.ow, g.c}) && v.same_shape(in[2], "dy", in[1], "y") &&
             v.same_shape(out[0], "dx", in[0], "x");
    }
    case OpId::Relu:
    case OpId::Scale:
    case OpId::NormalizeImage:
    case OpId::Identity:
      return v.same_shape(out[0], v.out_name(0), in[0], v.in_name(0));
    case OpId::ReluGrad:
      return v.same_shape(in[1], "y", in[0], "dy") && v.same_shape(out[0], "dx", in[0], "dy");
    case OpId::MatMul:
    case OpId::FusedMatMul: {
      const axon_matmul_attrs& a = s.id == OpId::MatMul ? *static_cast<const axon_matmul_attrs*>(c.attrs)
                                                        : static_cast<const axon_fused_matmul_attrs*>(c.attrs)->matmul;
      if (!v.rank_is(in[0], "a", 2) || !v.rank_is(in[1], "b", 2)) return false;
      const int64_t m = a.transpose_a ? in[0].dims[1] : in[0].dims[0], k = a.transpose_a ? in[0].dims[0] : in[0].dims[1];
      const int64_t kb = a.transpose_b ? in[1].dims[1] : in[1].dims[0], n = a.transpose_b ? in[1].dims[0] : in[1].dims[1];
      if (k != kb)
        return v.fail("inner dimensions differ: a %s%s, b %s%s", dims_string(in[0]).c_str(), a.transpose_a ? "^T" : "",
                      dims_string(in[1]).c_str(), a.transpose_b ? "^T" : "");
      if (s.id == OpId::FusedMatMul && !v.shape_is(in[2], "bias", {n})) return false;
      return v.shape_is(out[0], "c", {m, n});
    }
    case OpId::BiasAdd:  // TensorFlow's rule: at least 2-D
      if (in[0].rank < 2) return v.fail("x must have rank >= 2, got shape %s", dims_string(in[0]).c_str());
      return v.shape_is(in[1], "bias", {in[0].dims[in[0].rank - 1]}) && v.same_shape(out[0], "y", in[0], "x");
    case OpId::BiasAddGrad:
      if (in[0].rank < 2) return v.fail("dy must have rank >= 2, got shape %s", dims_string(in[0]).c_str());
      return v.shape_is(out[0], "dbias", {in[0].dims[in[0].rank - 1]});
    case OpId::SparseSoftmaxCrossEntropyWithLogits:
      return v.rank_is(in[0], "logits", 2) && v.has_classes(in[0]) && v.shape_is(in[1], "labels", {in[0].dims[0]}) &&
             v.shape_is(out[0], "loss", {in[0].dims[0]}) && v.same_shape(out[1], "dlogits", in[0], "logits");
    case OpId::InTopK:
    case OpId::SparseCategoricalAccuracy:
      return v.rank_is(in[0], "logits", 2) && v.has_classes(in[0]) && v.shape_is(in[1], "labels", {in[0].dims[0]}) &&
             v.shape_is(out[0], "correct", {in[0].dims[0]});
    case OpId::ApplyAdam: {
      const auto& a = *static_cast<const axon_adam_attrs*>(c.attrs);
      if (a.step < 1) return v.fail("step must be >= 1, got %lld", static_cast<long long>(a.step));
      return v.same_shape(in[1], "m", in[0], "var") && v.same_shape(in[2], "v", in[0], "var") &&
             v.same_shape(in[3], "grad", in[0], "var");
    }
    case OpId::ApplySGD: {
      const auto& a = *static_cast<const axon_sgd_attrs*>(c.attrs);
      if (!v.finite(a.learning_rate, "learning_rate")) return false;
      if (!(a.momentum >= 0 && a.momentum <= 1))
        return v.fail("momentum must be in [0, 1], got %g", double(a.momentum));
      if (a.nesterov != 0 && a.nesterov != 1) return v.fail("nesterov must be 0 or 1, got %d", a.nesterov);
      return v.same_shape(in[1], "velocity", in[0], "var") && v.same_shape(in[2], "grad", in[0], "var");
    }
    case OpId::ApplyRMSprop: {
      const auto& a = *static_cast<const axon_rmsprop_attrs*>(c.attrs);
      if (!v.finite(a.learning_rate, "learning_rate") || !v.finite(a.epsilon, "epsilon")) return false;
      if (!(a.rho >= 0 && a.rho <= 1)) return v.fail("rho must be in [0, 1], got %g", double(a.rho));
      if (!(a.momentum >= 0 && a.momentum <= 1))
        return v.fail("momentum must be in [0, 1], got %g", double(a.momentum));
      if (a.centered != 0 && a.centered != 1) return v.fail("centered must be 0 or 1, got %d", a.centered);
      return v.same_shape(in[1], "velocity", in[0], "var") && v.same_shape(in[2], "momentum", in[0], "var") &&
             v.same_shape(in[3], "average_grad", in[0], "var") && v.same_shape(in[4], "grad", in[0], "var");
    }
    case OpId::ApplyAdamWithAmsgrad: {
      const auto& a = *static_cast<const axon_adam_attrs*>(c.attrs);
      if (a.step < 1) return v.fail("step must be >= 1, got %lld", static_cast<long long>(a.step));
      return v.same_shape(in[1], "m", in[0], "var") && v.same_shape(in[2], "v", in[0], "var") &&
             v.same_shape(in[3], "vhat", in[0], "var") && v.same_shape(in[4], "grad", in[0], "var");
    }
    case OpId::ApplyAdagrad: {
      const auto& a = *static_cast<const axon_adagrad_attrs*>(c.attrs);
      if (!v.finite(a.learning_rate, "learning_rate") || !v.finite(a.epsilon, "epsilon")) return false;
      return v.same_shape(in[1], "accumulator", in[0], "var") && v.same_shape(in[2], "grad", in[0], "var");
    }
    case OpId::ApplyNadam: {
      const auto& a = *static_cast<const axon_nadam_attrs*>(c.attrs);
      if (a.step < 1) return v.fail("step must be >= 1, got %lld", static_cast<long long>(a.step));
      if (!v.finite(a.learning_rate, "learning_rate") || !v.finite(a.u_product, "u_product")) return false;
      return v.same_shape(in[1], "m", in[0], "var") && v.same_shape(in[2], "v", in[0], "var") &&
             v.same_shape(in[3], "grad", in[0], "var");
    }
    case OpId::ApplyWeightDecay: {
      const auto& a = *static_cast<const axon_weight_decay_attrs*>(c.attrs);
      return v.finite(a.learning_rate, "learning_rate") && v.finite(a.weight_decay, "weight_decay");
    }
    case OpId::ClipGradients: {
      const auto& a = *static_cast<const axon_clip_attrs*>(c.attrs);
      const int mode = raw(a.mode);
      if (mode < AXON_CLIP_VALUE || mode > AXON_CLIP_GLOBAL_NORM) return v.fail("unknown clip mode %d", mode);
      if (!(a.clip > 0) || !v.finite(a.clip, "clip"))
        return v.fail("clip must be a positive number, got %g", double(a.clip));
      if (in[0].rank != 1) return v.fail("grad must have rank 1, got shape %s", dims_string(in[0]).c_str());
      if (!v.rank_is(in[1], "segment_ends", 1)) return false;
      if (in[0].dims[0] > 0 && in[1].dims[0] == 0)
        return v.fail("segment_ends is empty for a grad of %lld elements", static_cast<long long>(in[0].dims[0]));
      return true;
    }
    case OpId::CategoricalCrossentropy:
    case OpId::BinaryCrossentropy:
    case OpId::RegressionLoss: {
      if (s.id == OpId::RegressionLoss) {
        const auto& a = *static_cast<const axon_regression_loss_attrs*>(c.attrs);
        const int loss = raw(a.loss);
        if (loss < AXON_LOSS_MEAN_SQUARED_ERROR || loss > AXON_LOSS_HUBER) return v.fail("unknown loss %d", loss);
        if (loss == AXON_LOSS_HUBER && !(a.delta > 0 && v.finite(a.delta, "delta")))
          return v.fail("delta must be a positive number, got %g", double(a.delta));
      } else {
        const auto& a = *static_cast<const axon_crossentropy_attrs*>(c.attrs);
        if (a.from_logits != 0 && a.from_logits != 1)
          return v.fail("from_logits must be 0 or 1, got %d", a.from_logits);
        if (!(a.label_smoothing >= 0 && a.label_smoothing <= 1))
          return v.fail("label_smoothing must be in [0, 1], got %g", double(a.label_smoothing));
      }
      if (!v.rank_is(in[0], "predictions", 2)) return false;
      if (in[0].dims[1] < 1) return v.fail("predictions %s have no units", dims_string(in[0]).c_str());
      if (s.id == OpId::BinaryCrossentropy && in[0].dims[1] != 1)
        return v.fail("predictions must have 1 unit, got shape %s", dims_string(in[0]).c_str());
      return v.shape_is(in[1], "labels", {in[0].dims[0]}) && v.shape_is(out[0], "loss", {in[0].dims[0]}) &&
             v.same_shape(out[1], "dpredictions", in[0], "predictions");
    }
    case OpId::BinaryAccuracy: {
      const auto& a = *static_cast<const axon_binary_accuracy_attrs*>(c.attrs);
      if (!v.finite(a.threshold, "threshold") || !v.rank_is(in[0], "predictions", 2)) return false;
      if (in[0].dims[1] != 1) return v.fail("predictions must have 1 unit, got shape %s", dims_string(in[0]).c_str());
      return v.shape_is(in[1], "labels", {in[0].dims[0]}) && v.shape_is(out[0], "correct", {in[0].dims[0]});
    }
    case OpId::InTopKV2: {
      const auto& a = *static_cast<const axon_in_top_k_attrs*>(c.attrs);
      if (a.k < 1) return v.fail("k must be >= 1, got %d", a.k);
      return v.rank_is(in[0], "predictions", 2) && v.has_classes(in[0]) &&
             v.shape_is(in[1], "targets", {in[0].dims[0]}) && v.shape_is(out[0], "correct", {in[0].dims[0]});
    }
    case OpId::Sum: {
      const axon_tensor& y = out[0];
      if ((y.rank == 0) || (y.rank == 1 && y.dims[0] == 1)) return true;
      return v.fail("y must be a scalar ([] or [1]), got shape %s", dims_string(y).c_str());
    }
    case OpId::Fill:
    case OpId::StatelessRandomNormalV2:
    case OpId::StatelessRandomUniformV2:
      return true;
    case OpId::ReduceSum:
    case OpId::Mean:
    case OpId::Max:
      return v.reduction(*static_cast<const axon_reduce_attrs*>(c.attrs), in[0], out[0]);
    case OpId::AddN:
      for (int i = 1; i < c.num_inputs; ++i)
        if (!v.same_shape(in[i], "x", in[0], "x0")) return false;
      return v.same_shape(out[0], "y", in[0], "x0");
    case OpId::FusedConv2D: {
      const auto& a = *static_cast<const axon_fused_conv2d_attrs*>(c.attrs);
      ConvGeometry g;
      return v.conv_attrs(a.conv, "conv") && v.activation(a.activation) &&
             v.conv(a.conv, in[0], "x", in[1], "filter", &g) && v.shape_is(in[2], "bias", {g.oc}) &&
             v.shape_is(out[0], "y", {g.n, g.oh, g.ow, g.oc});
    }
    case OpId::FusedReluGradBiasAddGrad:
      if (in[0].rank < 2) return v.fail("dy must have rank >= 2, got shape %s", dims_string(in[0]).c_str());
      return v.same_shape(in[1], "y", in[0], "dy") && v.same_shape(out[0], "dx", in[0], "dy") &&
             v.shape_is(out[1], "dbias", {in[0].dims[in[0].rank - 1]});
    case OpId::FusedConv2DMaxPool:
    case OpId::FusedConv2DMaxPoolGrad: {
      const auto& a = *static_cast<const axon_fused_conv2d_max_pool_attrs*>(c.attrs);
      if (!v.conv_attrs(a.conv, "conv") || !v.activation(a.activation) || !v.pool_attrs(a.pool)) return false;
      if (static_cast<int64_t>(a.pool.window_h) * a.pool.window_w > 255)
        return v.fail("pool window %dx%d has more than 255 taps", a.pool.window_h, a.pool.window_w);
      ConvGeometry g;
      if (!v.conv(a.conv, in[0], "x", in[1], "filter", &g)) return false;
      const PoolGeometry p = pool_geometry(a.pool, g.n, g.oh, g.ow, g.oc);
      if (raw(a.pool.padding) == AXON_PADDING_VALID && (g.oh < a.pool.window_h || g.ow < a.pool.window_w))
        return v.fail("pool window %dx%d is larger than the convolution's output [%lld,%lld] with VALID padding",
                      a.pool.window_h, a.pool.window_w, static_cast<long long>(g.oh), static_cast<long long>(g.ow));
      if (s.id == OpId::FusedConv2DMaxPool)
        return v.shape_is(in[2], "bias", {g.oc}) && v.shape_is(out[0], "y", {p.n, p.oh, p.ow, p.c}) &&
               v.same_shape(out[1], "argmax", out[0], "y");
      return v.shape_is(in[2], "dy", {p.n, p.oh, p.ow, p.c}) && v.same_shape(in[3], "argmax", in[2], "dy") &&
             v.same_shape(out[0], "dfilter", in[1], "filter") && v.shape_is(out[1], "dbias", {g.oc}) &&
             (c.num_outputs < 3 || v.same_shape(out[2], "dx", in[0], "x"));
    }
    case OpId::Sigmoid:
    case OpId::Tanh:
    case OpId::Elu:
    case OpId::Selu:
    case OpId::Relu6:
    case OpId::LeakyRelu:
    case OpId::Softplus:
    case OpId::Gelu:
    case OpId::Silu:
    case OpId::ClippedRelu:
      return v.same_shape(out[0], "y", in[0], "x");
    case OpId::SigmoidGrad:
    case OpId::TanhGrad:
    case OpId::EluGrad:
    case OpId::SeluGrad:
    case OpId::Relu6Grad:
    case OpId::LeakyReluGrad:
    case OpId::SoftplusGrad:
    case OpId::GeluGrad:
    case OpId::SiluGrad:
    case OpId::ClippedReluGrad:
      return v.same_shape(in[1], v.in_name(1), in[0], v.in_name(0)) && v.same_shape(out[0], "dx", in[0], v.in_name(0));
    case OpId::Softmax:
      if (!v.at_least_rank(in[0], "logits", 1)) return false;
      if (in[0].dims[in[0].rank - 1] < 1) return v.fail("logits %s have no classes", dims_string(in[0]).c_str());
      return v.same_shape(out[0], "y", in[0], "logits");
    case OpId::SoftmaxGrad:
      return v.at_least_rank(in[0], "dy", 1) && v.same_shape(in[1], "y", in[0], "dy") &&
             v.same_shape(out[0], "dx", in[0], "dy");
    case OpId::AvgPool: {
      PoolGeometry g;
      return v.pool(*static_cast<const axon_pool_attrs*>(c.attrs), in[0], "x", &g) &&
             v.shape_is(out[0], "y", {g.n, g.oh, g.ow, g.c});
    }
    case OpId::AvgPoolGrad: {
      PoolGeometry g;
      return v.pool(*static_cast<const axon_pool_attrs*>(c.attrs), out[0], "dx", &g) &&
             v.shape_is(in[0], "dy", {g.n, g.oh, g.ow, g.c});
    }
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Maximum:
      return v.same_shape(in[1], "b", in[0], "a") && v.same_shape(out[0], "y", in[0], "a");
    case OpId::MaximumGrad:
      return v.same_shape(in[1], "a", in[0], "dy") && v.same_shape(in[2], "b", in[0], "dy") &&
             v.same_shape(out[0], "da", in[0], "dy") && v.same_shape(out[1], "db", in[0], "dy");
    case OpId::ConcatV2:
      return v.concat(*static_cast<const axon_concat_attrs*>(c.attrs), c);
    case OpId::Slice:
      return v.placed_inside(*static_cast<const axon_slice_attrs*>(c.attrs), out[0], "y", in[0], "x");
    case OpId::Pad:
      return v.placed_inside(*static_cast<const axon_slice_attrs*>(c.attrs), in[0], "x", out[0], "y");
    case OpId::FusedBatchNormV3:
    case OpId::FusedBatchNormEx:
    case OpId::FusedBatchNormAddEx: {
      const auto& a = s.id == OpId::FusedBatchNormV3 ? *static_cast<const axon_batch_norm_attrs*>(c.attrs)
                                                     : static_cast<const axon_fused_batch_norm_attrs*>(c.attrs)->batch_norm;
      if (!v.at_least_rank(in[0], "x", 2)) return false;
      const int64_t ch = in[0].dims[in[0].rank - 1];
      for (int i = 1; i < 5; ++i)
        if (!v.channels(in[i], v.in_name(i), ch)) return false;
      if (s.id == OpId::FusedBatchNormAddEx && !v.same_shape(in[5], "side_input", in[0], "x")) return false;
      if (a.is_training && c.num_outputs != 5)
        return v.fail("training needs all 5 outputs, got %d", c.num_outputs);
      for (int i = 1; i < c.num_outputs; ++i)
        if (!v.channels(out[i], v.out_name(i), ch)) return false;
      return v.same_shape(out[0], "y", in[0], "x");
    }
    case OpId::FusedBatchNormGradV3:
    case OpId::FusedBatchNormGradEx:
    case OpId::FusedBatchNormAddGradEx: {
      if (!v.at_least_rank(in[1], "x", 2)) return false;
      const int64_t ch = in[1].dims[in[1].rank - 1];
      if (s.id != OpId::FusedBatchNormGradV3 && !v.same_shape(in[5], "y", in[1], "x")) return false;
      if (s.id == OpId::FusedBatchNormAddGradEx && !v.same_shape(out[3], "side_input_backprop", in[1], "x"))
        return false;
      return v.same_shape(in[0], "dy", in[1], "x") && v.channels(in[2], "scale", ch) &&
             v.channels(in[3], "reserve_space_1", ch) && v.channels(in[4], "reserve_space_2", ch) &&
             v.same_shape(out[0], "dx", in[1], "x") && v.channels(out[1], "scale_backprop", ch) &&
             v.channels(out[2], "offset_backprop", ch);
    }
    case OpId::MovingAverage:
      return v.same_shape(in[1], "value", in[0], "var");
    case OpId::DepthwiseConv2dNative:
    case OpId::DepthwiseConv2dNativeBackpropInput:
    case OpId::DepthwiseConv2dNativeBackpropFilter: {
      // The filter's last dimension is the channel multiplier M; y has C * M channels.
      ConvGeometry g;
      const auto& a = *static_cast<const axon_conv2d_attrs*>(c.attrs);
      const bool fwd = s.id == OpId::DepthwiseConv2dNative, bwd_in = s.id == OpId::DepthwiseConv2dNativeBackpropInput;
      const axon_tensor& image = bwd_in ? out[0] : in[0];
      const axon_tensor& filter = fwd || bwd_in ? in[1] : out[0];
      if (!v.conv(a, image, bwd_in ? "dx" : "x", filter, s.id == OpId::DepthwiseConv2dNativeBackpropFilter ? "dfilter" : "filter", &g))
        return false;
      const axon_tensor& y = fwd ? out[0] : in[bwd_in ? 0 : 1];
      return v.shape_is(y, fwd ? "y" : "dy", {g.n, g.oh, g.ow, g.c * g.oc});
    }
    case OpId::LayerNorm:
    case OpId::LayerNormGrad: {
      // x [R, K]; scale, offset and the gradients of them [K]; mean, inv_std [R].
      const bool fwd = s.id == OpId::LayerNorm;
      const axon_tensor& x = in[fwd ? 0 : 1];
      if (!v.rank_is(x, "x", 2)) return false;
      const int64_t rows = x.dims[0], k = x.dims[1];
      if (k < 1) return v.fail("x %s has no values per row to normalise", dims_string(x).c_str());
      if (fwd)
        return v.channels(in[1], "scale", k) && v.channels(in[2], "offset", k) && v.same_shape(out[0], "y", x, "x") &&
               v.shape_is(out[1], "mean", {rows}) && v.shape_is(out[2], "inv_std", {rows});
      return v.same_shape(in[0], "dy", x, "x") && v.channels(in[2], "scale", k) && v.shape_is(in[3], "mean", {rows}) &&
             v.shape_is(in[4], "inv_std", {rows}) && v.same_shape(out[0], "dx", x, "x") &&
             v.channels(out[1], "scale_backprop", k) && v.channels(out[2], "offset_backprop", k);
    }
    case OpId::count:
      break;
  }
  return v.fail("no shape rule");
}

}  // namespace validate_detail

// True when `call` is a well-formed call of op `s`; otherwise false, with one
// line naming the op and the tensors involved in *why (when why != nullptr).
inline bool validate_call(const OpSchema& s, const axon_kernel_call& call, std::string* why) {
  using validate_detail::raw;
  validate_detail::Validation v(s, call, why);
  if (call.struct_size < AXON_STRUCT_SIZE(axon_kernel_call, attrs))
    return v.fail("kernel call struct too small (%zu bytes)", call.struct_size);
  const bool inputs_ok = call.num_inputs >= s.min_inputs && (s.max_inputs < 0 || call.num_inputs <= s.max_inputs);
  const bool outputs_ok = call.num_outputs >= s.min_outputs && call.num_outputs <= s.max_outputs;
  if (!inputs_ok || !outputs_ok) {
    char want_in[32], want_out[32];
    if (s.max_inputs < 0)
      std::snprintf(want_in, sizeof want_in, "at least %d", s.min_inputs);
    else if (s.min_inputs == s.max_inputs)
      std::snprintf(want_in, sizeof want_in, "%d", s.min_inputs);
    else
      std::snprintf(want_in, sizeof want_in, "%d to %d", s.min_inputs, s.max_inputs);
    if (s.min_outputs == s.max_outputs)
      std::snprintf(want_out, sizeof want_out, "%d", s.min_outputs);
    else
      std::snprintf(want_out, sizeof want_out, "%d to %d", s.min_outputs, s.max_outputs);
    return v.fail("expected %s inputs and %s outputs, got %d and %d", want_in, want_out, call.num_inputs,
                  call.num_outputs);
  }
  if ((call.num_inputs > 0 && call.inputs == nullptr) || (call.num_outputs > 0 && call.outputs == nullptr))
    return v.fail("tensor array missing");

  const int key_raw = call.num_inputs > 0 ? raw(call.inputs[0].dtype) : raw(call.outputs[0].dtype);
  if (key_raw < 0 || key_raw >= kDtypeCount || !kernel_dtype_allowed(s, static_cast<axon_dtype>(key_raw)))
    return v.fail("no %s kernel is defined for dtype %s", s.name,
                  key_raw >= 0 && key_raw < kDtypeCount ? dtype_name(static_cast<axon_dtype>(key_raw)) : "unknown");
  const auto key = static_cast<axon_dtype>(key_raw);
  for (int i = 0; i < call.num_inputs; ++i)
    if (!v.tensor(call.inputs[i], v.in_name(i), slot_dtype(input_slot(s, i), key))) return false;
  for (int i = 0; i < call.num_outputs; ++i)
    if (!v.tensor(call.outputs[i], v.out_name(i), slot_dtype(output_slot(s, i), key))) return false;

  if (s.attrs != AttrKind::none) {
    const AttrInfo info = attr_info(s.attrs);
    if (call.attrs == nullptr) return v.fail("attributes missing (%s)", info.struct_name);
    const size_t size = *static_cast<const size_t*>(call.attrs);  // every struct begins with struct_size
    if (size < info.min_size)
      return v.fail("attribute struct too small (%s: %zu < %zu bytes)", info.struct_name, size, info.min_size);
    if (s.attrs == AttrKind::conv2d && !v.conv_attrs(*static_cast<const axon_conv2d_attrs*>(call.attrs), "conv"))
      return false;
    if (s.attrs == AttrKind::pool && !v.pool_attrs(*static_cast<const axon_pool_attrs*>(call.attrs))) return false;
    if (s.attrs == AttrKind::fused_matmul) {
      const auto& f = *static_cast<const axon_fused_matmul_attrs*>(call.attrs);
      if (f.matmul.struct_size < attr_info(AttrKind::matmul).min_size)
        return v.fail("matmul attribute struct too small (%zu < %zu bytes)", f.matmul.struct_size,
                      attr_info(AttrKind::matmul).min_size);
      if (!v.activation(f.activation)) return false;
    }
    if (s.attrs == AttrKind::leaky_relu && !v.finite(static_cast<const axon_leaky_relu_attrs*>(call.attrs)->alpha, "alpha"))
      return false;
    if (s.attrs == AttrKind::clipped_relu) {
      const auto& a = *static_cast<const axon_clipped_relu_attrs*>(call.attrs);
      if (!v.finite(a.negative_slope, "negative_slope") || !v.finite(a.threshold, "threshold")) return false;
      if (!(a.max_value >= 0)) return v.fail("max_value must be >= 0 (INFINITY for none), got %g", static_cast<double>(a.max_value));
    }
    if (s.attrs == AttrKind::gelu) {
      const int32_t approximate = static_cast<const axon_gelu_attrs*>(call.attrs)->approximate;
      if (approximate != 0 && approximate != 1) return v.fail("approximate must be 0 or 1, got %d", approximate);
    }
    if (s.attrs == AttrKind::batch_norm && !v.batch_norm_attrs(*static_cast<const axon_batch_norm_attrs*>(call.attrs)))
      return false;
    if (s.attrs == AttrKind::fused_batch_norm) {
      const auto& f = *static_cast<const axon_fused_batch_norm_attrs*>(call.attrs);
      if (f.batch_norm.struct_size < attr_info(AttrKind::batch_norm).min_size)
        return v.fail("batch_norm attribute struct too small (%zu < %zu bytes)", f.batch_norm.struct_size,
                      attr_info(AttrKind::batch_norm).min_size);
      if (!v.batch_norm_attrs(f.batch_norm) || !v.activation(f.activation)) return false;
    }
    if (s.attrs == AttrKind::random) {
      const auto& a = *static_cast<const axon_random_attrs*>(call.attrs);
      if (!v.finite(a.scale, "scale") || !v.finite(a.offset, "offset")) return false;
    }
    if (s.attrs == AttrKind::moving_average) {
      const auto& a = *static_cast<const axon_moving_average_attrs*>(call.attrs);
      if (!v.finite(a.momentum, "momentum") || !v.finite(a.weight, "weight")) return false;
    }
    if (s.attrs == AttrKind::layer_norm) {
      const float eps = static_cast<const axon_layer_norm_attrs*>(call.attrs)->epsilon;
      if (!(eps > 0) || !v.finite(eps, "epsilon"))
        return v.fail("epsilon must be a positive number, got %g", static_cast<double>(eps));
    }
  }
  return validate_detail::shapes(v, s, call);
}

}  // namespace axon
