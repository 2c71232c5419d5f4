// Runs every case of TensorFlow golden files (tests/goldens/tf) on device 0 of
// one plugin, through the C ABI alone, and compares each output with
// TensorFlow's:
//  - outputs with a bound tensor: sums of products within
//    tol::sum_allowed(want, S), and the ABI 1.4 activations and softmax the
//    same way with S = B of axon/function_bounds.hpp; the losses and the
//    optimizers within tol::ops_allowed (tests/common/tolerance.hpp states
//    both and their power);
//  - the others (MaxPool, Relu, BiasAdd, InTopK(V2), ...) exactly: equal as
//    floats (-0 == +0), bytes and integers bit for bit.
// Outputs start as NaN (0xEE for bytes), so an element left unwritten fails.
//
//   axon-golden-check [--all-ops] [--gpu] <libaxon-plugin-NAME.so> <file.axg>...
//
// --all-ops: an op the plugin has no kernel for fails (else it is skipped).
// --gpu: sums get tol::kGpuSumUlps instead of tol::kSumUlps (cuDNN's
// Winograd and FFT convolutions; tests/common/tolerance.hpp).
// Exit: 0 all passed, 1 a failure (also: a device the plugin cannot use),
// 2 bad usage or an unreadable golden file, 77 the driver reports no device.
// Plain C++ (no Catch2) so that it builds on the GPU machine.
#include "device_presence.hpp"
#include "golden_file.hpp"
#include "plugin_harness.hpp"
#include "tolerance.hpp"

#include <axon/any_attrs.hpp>
#include <axon/op_table.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace axon::test;
using axon::AnyAttrs;
using axon::AttrKind;
using axon::OpSchema;
namespace golden = axon::golden;

namespace {

int to_int(const golden::Case& c, const char* key) { return std::atoi(c.attr(key).c_str()); }
float to_float(const golden::Case& c, const char* key) { return std::strtof(c.attr(key).c_str(), nullptr); }
axon_padding padding(const golden::Case& c, const char* key) {
  return c.attr(key) == "SAME" ? AXON_PADDING_SAME : AXON_PADDING_VALID;
}
int32_t activation(const golden::Case& c) {
  return c.attr("activation") == "relu" ? AXON_ACTIVATION_RELU : AXON_ACTIVATION_NONE;
}

axon_conv2d_attrs conv_attrs(const golden::Case& c) {
  return {sizeof(axon_conv2d_attrs), to_int(c, "stride_h"), to_int(c, "stride_w"), to_int(c, "dilation_h"),
          to_int(c, "dilation_w"), padding(c, "padding")};
}

// The attribute struct the op table says the op takes, from the case's attributes.
AnyAttrs make_attrs(const golden::Case& c) {
  const OpSchema* op = axon::find_op(c.op);
  const auto matmul = [&] {
    return axon_matmul_attrs{sizeof(axon_matmul_attrs), to_int(c, "transpose_a"), to_int(c, "transpose_b")};
  };
  const auto batch_norm = [&] {
    return axon_batch_norm_attrs{sizeof(axon_batch_norm_attrs), to_float(c, "epsilon"),
                                 to_float(c, "exponential_avg_factor"), to_int(c, "is_training")};
  };
  switch (op == nullptr ? AttrKind::none : op->attrs) {
    case AttrKind::conv2d: return conv_attrs(c);
    case AttrKind::pool:
      return axon_pool_attrs{sizeof(axon_pool_attrs), to_int(c, "window_h"), to_int(c, "window_w"),
                             to_int(c, "stride_h"), to_int(c, "stride_w"), padding(c, "padding")};
    case AttrKind::matmul: return matmul();
    case AttrKind::adam:
      return axon_adam_attrs{sizeof(axon_adam_attrs), to_float(c, "learning_rate"), to_float(c, "beta_1"),
                             to_float(c, "beta_2"), to_float(c, "epsilon"), static_cast<int64_t>(to_int(c, "step"))};
    case AttrKind::fill: return axon_fill_attrs{sizeof(axon_fill_attrs), to_float(c, "value")};
    case AttrKind::scale: return axon_scale_attrs{sizeof(axon_scale_attrs), to_float(c, "alpha")};
    case AttrKind::fused_conv2d:
      return axon_fused_conv2d_attrs{sizeof(axon_fused_conv2d_attrs), conv_attrs(c), activation(c)};
    case AttrKind::fused_matmul:
      return axon_fused_matmul_attrs{sizeof(axon_fused_matmul_attrs), matmul(), activation(c)};
    case AttrKind::fused_conv2d_max_pool:
      return axon_fused_conv2d_max_pool_attrs{
          sizeof(axon_fused_conv2d_max_pool_attrs), conv_attrs(c), activation(c),
          {sizeof(axon_pool_attrs), to_int(c, "pool_window_h"), to_int(c, "pool_window_w"),
           to_int(c, "pool_stride_h"), to_int(c, "pool_stride_w"), padding(c, "pool_padding")}};
    case AttrKind::batch_norm: return batch_norm();
    case AttrKind::layer_norm: return axon_layer_norm_attrs{sizeof(axon_layer_norm_attrs), to_float(c, "epsilon")};
    case AttrKind::fused_batch_norm:
      return axon_fused_batch_norm_attrs{sizeof(axon_fused_batch_norm_attrs), batch_norm(), activation(c)};
    case AttrKind::leaky_relu: return axon_leaky_relu_attrs{sizeof(axon_leaky_relu_attrs), to_float(c, "alpha")};
    case AttrKind::clipped_relu:  // max_value "inf": none
      return axon_clipped_relu_attrs{sizeof(axon_clipped_relu_attrs), to_float(c, "negative_slope"),
                                     to_float(c, "max_value"), to_float(c, "threshold")};
    case AttrKind::gelu: return axon_gelu_attrs{sizeof(axon_gelu_attrs), to_int(c, "approximate")};
    case AttrKind::concat: return axon_concat_attrs{sizeof(axon_concat_attrs), to_int(c, "axis")};
    case AttrKind::slice: {  // begin: "1,2,0"
      axon_slice_attrs a{sizeof(axon_slice_attrs), {}};
      const std::string begin = c.attr("begin");
      size_t at = 0;
      for (int i = 0; i < AXON_MAX_RANK && at < begin.size(); ++i) {
        a.begin[i] = std::strtoll(begin.c_str() + at, nullptr, 10);
        const size_t comma = begin.find(',', at);
        at = comma == std::string::npos ? begin.size() : comma + 1;
      }
      return a;
    }
    case AttrKind::moving_average:
      return axon_moving_average_attrs{sizeof(axon_moving_average_attrs), to_float(c, "momentum"),
                                       to_float(c, "weight")};
    case AttrKind::sgd:
      return axon_sgd_attrs{sizeof(axon_sgd_attrs), to_float(c, "learning_rate"), to_float(c, "momentum"),
                            to_int(c, "nesterov")};
    case AttrKind::rmsprop:
      return axon_rmsprop_attrs{sizeof(axon_rmsprop_attrs), to_float(c, "learning_rate"), to_float(c, "rho"),
                                to_float(c, "momentum"), to_float(c, "epsilon"), to_int(c, "centered")};
    case AttrKind::adagrad:
      return axon_adagrad_attrs{sizeof(axon_adagrad_attrs), to_float(c, "learning_rate"), to_float(c, "epsilon")};
    case AttrKind::nadam:
      return axon_nadam_attrs{sizeof(axon_nadam_attrs), to_float(c, "learning_rate"), to_float(c, "beta_1"),
                              to_float(c, "beta_2"), to_float(c, "epsilon"),
                              static_cast<int64_t>(to_int(c, "step")), to_float(c, "u_product")};
    case AttrKind::weight_decay:
      return axon_weight_decay_attrs{sizeof(axon_weight_decay_attrs), to_float(c, "learning_rate"),
                                     to_float(c, "weight_decay")};
    case AttrKind::clip:
      return axon_clip_attrs{sizeof(axon_clip_attrs), static_cast<axon_clip_mode>(to_int(c, "mode")),
                             to_float(c, "clip")};
    case AttrKind::crossentropy:
      return axon_crossentropy_attrs{sizeof(axon_crossentropy_attrs), to_int(c, "from_logits"),
                                     to_float(c, "label_smoothing")};
    case AttrKind::regression_loss:
      return axon_regression_loss_attrs{sizeof(axon_regression_loss_attrs),
                                        static_cast<axon_regression_loss>(to_int(c, "loss")), to_float(c, "delta")};
    case AttrKind::binary_accuracy:
      return axon_binary_accuracy_attrs{sizeof(axon_binary_accuracy_attrs), to_float(c, "threshold")};
    case AttrKind::in_top_k: return axon_in_top_k_attrs{sizeof(axon_in_top_k_attrs), to_int(c, "k")};
    case AttrKind::none:
    case AttrKind::random:  // no goldens: their bits are TensorFlow's Philox, checked in tests/kernels
    case AttrKind::reduce:
      break;
  }
  return {};
}

std::unique_ptr<DeviceTensor> upload(TestDevice& dev, const golden::Tensor& t) {
  auto d = std::make_unique<DeviceTensor>(dev, t.dtype, t.dims);
  d->upload(t.bytes);
  return d;
}

// An output buffer shaped like `t`, filled with NaN (0xEE for integers).
std::unique_ptr<DeviceTensor> poisoned(TestDevice& dev, const golden::Tensor& t) {
  auto d = std::make_unique<DeviceTensor>(dev, t.dtype, t.dims);
  if (t.dtype == AXON_FLOAT32)
    d->upload(std::vector<float>(static_cast<size_t>(t.numel()), std::nanf("")));
  else
    d->upload(std::vector<unsigned char>(t.bytes.size(), 0xEE));
  return d;
}

struct Outcome {
  bool ok = true;
  double worst = 0;  // |got - want| / allowed at the worst element (exact outputs: 0 or infinity)
  std::string detail;
};

// The bound on sums, in units of u * S (--gpu raises it).
double g_sum_ulps = axon::test::tol::kSumUlps;

// One output against TensorFlow's; bound is null for an exact comparison.
void compare(const std::string& op, size_t index, const std::vector<unsigned char>& got_bytes, const golden::Tensor& want,
             const golden::Tensor* bound, Outcome& o) {
  char b[256];
  if (want.dtype == AXON_FLOAT32 && bound == nullptr) {  // equal as floats: -0 == +0 (TensorFlow's ReluGrad gives -0)
    const std::vector<float> w = want.values<float>();
    for (size_t i = 0; i < w.size(); ++i) {
      float g;
      std::memcpy(&g, &got_bytes[i * sizeof(float)], sizeof g);
      if (!(g == w[i])) {
        std::snprintf(b, sizeof b, " [output %zu: not equal, first at element %zu: got %.9g, TensorFlow %.9g]", index, i,
                      double(g), double(w[i]));
        o.detail += b;
        o.ok = false;
        o.worst = INFINITY;
        return;
      }
    }
    return;
  }
  if (want.dtype != AXON_FLOAT32) {
    if (got_bytes != want.bytes) {
      size_t i = 0;
      const size_t width = golden::dtype_bytes(want.dtype);
      while (i < got_bytes.size() && std::memcmp(&got_bytes[i], &want.bytes[i], width) == 0) i += width;
      std::snprintf(b, sizeof b, " [output %zu: not bit-identical, first at element %zu]", index, i / width);
      o.detail += b;
      o.ok = false;
      o.worst = INFINITY;
    }
    return;
  }
  const std::vector<float> w = want.values<float>(), s = bound->values<float>();
  std::vector<float> g(w.size());
  std::memcpy(g.data(), got_bytes.data(), g.size() * sizeof(float));
  const axon::OpSchema* schema = axon::find_op(op.c_str());
  // Keras' optimizers, clipping and weight decay (ABI 1.6) and losses (ABI 1.7).
  const bool keras_op =
      schema != nullptr && schema->added.major == 1 && (schema->added.minor == 6 || schema->added.minor == 7);
  const bool ops_rule = op == "SparseSoftmaxCrossEntropyWithLogits" || op == "ApplyAdam" || keras_op;
  auto allowed = [&](size_t i) {
    return ops_rule ? axon::test::tol::ops_allowed(s[i]) : axon::test::tol::sum_allowed(w[i], s[i], g_sum_ulps);
  };
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double err = std::fabs(double(g[i]) - double(w[i]));
    const double excess = std::isnan(err) ? INFINITY : err / allowed(i);
    if (excess > o.worst) o.worst = excess;
    if (excess > 1 && bad++ == 0) first = i;
  }
  if (bad > 0) {
    std::snprintf(b, sizeof b, " [output %zu: %zu of %zu outside the bound, first at %zu: got %.9g, TensorFlow %.9g, "
                  "allowed %.3g]", index, bad, w.size(), first, double(g[first]), double(w[first]), allowed(first));
    o.detail += b;
    o.ok = false;
  }
}

Outcome run_case(TestDevice& dev, const golden::Case& c) {
  const AnyAttrs attrs = make_attrs(c);
  std::vector<std::unique_ptr<DeviceTensor>> in, out;
  std::vector<const DeviceTensor*> in_p;
  std::vector<DeviceTensor*> out_p;
  // Outputs in file order, each with the bound that follows it (if any).
  std::vector<std::pair<const golden::Tensor*, const golden::Tensor*>> wanted;
  for (const golden::Tensor& t : c.tensors) {
    if (t.role() == "in") {
      in.push_back(upload(dev, t));
      in_p.push_back(in.back().get());
    } else if (t.role() == "out") {
      wanted.emplace_back(&t, nullptr);
    } else if (t.role() == "bound" && !wanted.empty()) {
      wanted.back().second = &t;
    }
  }
  // The optimizers and MovingAverage update inputs in place and have no outputs (the op table says which).
  const axon::OpSchema* schema = axon::find_op(c.op.c_str());
  const bool in_place = schema != nullptr && schema->in_place_inputs > 0;
  if (!in_place)
    for (auto& [t, bound] : wanted) {
      out.push_back(poisoned(dev, *t));
      out_p.push_back(out.back().get());
    }
  run_op(dev, c.op.c_str(), in_p, out_p, axon::attrs_ptr(attrs));
  dev.sync();
  Outcome o;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const DeviceTensor& result = in_place ? *in[k] : *out[k];
    compare(c.op, k, result.download<unsigned char>(), *wanted[k].first, wanted[k].second, o);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  bool all_ops = false;
  int arg = 1;
  for (; arg < argc && argv[arg][0] == '-'; ++arg) {
    if (std::strcmp(argv[arg], "--all-ops") == 0) {
      all_ops = true;
    } else if (std::strcmp(argv[arg], "--gpu") == 0) {
      g_sum_ulps = axon::test::tol::kGpuSumUlps;
    } else {
      std::fprintf(stderr, "%s: unknown option '%s'\n", argv[0], argv[arg]);
      return 2;
    }
  }
  if (argc - arg < 2) {
    std::fprintf(stderr, "usage: %s [--all-ops] [--gpu] <libaxon-plugin-NAME.so> <file.axg>...\n", argv[0]);
    return 2;
  }
  std::vector<golden::Case> cases;
  try {
    for (int i = arg + 1; i < argc; ++i)
      for (golden::Case& c : golden::read_file(argv[i])) cases.push_back(std::move(c));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 2;
  }
  try {
    LoadedPlugin plugin(argv[arg]);
    std::string what = plugin.api.name;  // "CUDA device", as the other GPU drivers say
    for (char& ch : what) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (auto code = exit_without_device(plugin, (what + " device").c_str())) return *code;
    TestDevice dev(plugin, 0);
    std::printf("plugin %s (%s), %zu golden cases from TensorFlow\n", plugin.api.name, argv[arg], cases.size());
    int pass = 0, fail = 0, skip = 0;
    for (const golden::Case& c : cases) {
      const axon_dtype dt = !c.with_role("in").empty() ? c.with_role("in")[0]->dtype : c.with_role("out").at(0)->dtype;
      if (!dev.has(c.op.c_str(), dt)) {
        std::printf("%s  %-36s %-44s no kernel\n", all_ops ? "FAIL" : "SKIP", c.op.c_str(), c.name.c_str());
        all_ops ? ++fail : ++skip;
        continue;
      }
      Outcome o;
      try {
        o = run_case(dev, c);
      } catch (const std::exception& e) {
        o.ok = false;
        o.detail = std::string(" ") + e.what();
      }
      std::printf("%s  %-36s %-44s worst %.3g of the bound%s\n", o.ok ? "PASS" : "FAIL", c.op.c_str(), c.name.c_str(),
                  o.worst, o.detail.c_str());
      o.ok ? ++pass : ++fail;
    }
    std::printf("SUMMARY: %s: %d passed, %d failed, %d skipped\n", fail ? "FAIL" : "PASS", pass, fail, skip);
    return fail ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
