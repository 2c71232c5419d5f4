// The CUDA kernel library's ops of ABI 1.4 (and the batch normalization with
// relu of 1.5, with a side input of 2.1) through its own kernel table and
// op wrappers (activations.cpp, tensor_ops.cpp, batch_norm.cpp,
// pool_activation.cpp) on the fake CUDA libraries, the device code replaced
// by host loops over the same per-element arithmetic (fake_launch.cpp,
// fake_batch_norm.cpp), against TensorFlow's outputs (tf_values.inc) or
// values worked out here: which input is which, the attributes, rows and
// columns, and the outputs each mode writes. The device code itself is
// checked on a GPU (cuda_kernels, label gpu).
#include "fake_cuda_libraries.hpp"
#include "fake_device.hpp"

#include "cuda_device.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace axon::cuda {

// The kernel areas linked into this test, in place of kernel_table.cpp.
const sdk::KernelTable& kernel_table() {
  static const sdk::KernelTable table = [] {
    sdk::KernelTable t;
    register_activation_kernels(t);
    register_tensor_kernels(t);
    register_batch_norm_kernels(t);
    register_pool_activation_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace axon::cuda

namespace {

#include "tf_values.inc"

using namespace axon::fake_device;

// Within 1e-6 |want| + 1e-7 scale (activation_math_test.cpp says why).
void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::vector<double>& scale,
                  const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(what << "[" << i << "]: " << got[i] << ", want " << want[i]);
    if (std::isnan(want[i]))
      CHECK(std::isnan(got[i]));
    else
      CHECK(std::fabs(double(got[i]) - want[i]) <= 1e-6 * std::fabs(want[i]) + 1e-7 * scale[i]);
  }
}

std::vector<double> ones(size_t n) { return std::vector<double>(n, 1.0); }

// An activation and its gradient through the plugin's kernels, against TensorFlow.
void check_activation(Device& d, const char* op, const char* grad, const void* attrs, const std::vector<float>& y,
                      const std::vector<float>& dx, const std::vector<float>* tf_kinks = nullptr) {
  const std::vector<int64_t> s = {static_cast<int64_t>(kX.size())};
  Tensor x(s, kX), out(s), dy(s, kDy), yt(s, y), dxt(s);
  REQUIRE(run(d, op, {&x}, {&out}, attrs).message == "");
  std::vector<double> fwd_scale(kX.size()), grad_scale(kX.size());
  for (size_t i = 0; i < kX.size(); ++i) {
    fwd_scale[i] = 1 + std::fabs(kX[i]);
    grad_scale[i] = fwd_scale[i] * std::fabs(kDy[i]);
  }
  expect_close(out.data, y, fwd_scale, op);
  // Inputs in TensorFlow's order: (y, dy) for Sigmoid and Tanh, (dy, y) for Elu and Selu, (dy, x) for the others.
  const std::string g = grad;
  const Result r = g == "SigmoidGrad" || g == "TanhGrad" ? run(d, grad, {&yt, &dy}, {&dxt}, attrs)
                   : g == "EluGrad" || g == "SeluGrad"   ? run(d, grad, {&dy, &yt}, {&dxt}, attrs)
                                                         : run(d, grad, {&dy, &x}, {&dxt}, attrs);
  REQUIRE(r.message == "");
  expect_close(dxt.data, tf_kinks ? *tf_kinks : dx, grad_scale, grad);
}

}  // namespace

TEST_CASE("the activations' kernels take TensorFlow's inputs and the attributes, and agree with TensorFlow") {
  axon::fake::reset();
  Device d(0);
  check_activation(d, "Sigmoid", "SigmoidGrad", nullptr, kSigmoidY, kSigmoidDx);
  check_activation(d, "Tanh", "TanhGrad", nullptr, kTanhY, kTanhDx);
  check_activation(d, "Elu", "EluGrad", nullptr, kEluY, kEluDx);
  check_activation(d, "Selu", "SeluGrad", nullptr, kSeluY, kSeluDx);
  check_activation(d, "Relu6", "Relu6Grad", nullptr, kRelu6Y, kRelu6Dx);
  axon_leaky_relu_attrs leaky{};
  leaky.struct_size = sizeof leaky;
  leaky.alpha = 0.2f;
  check_activation(d, "LeakyRelu", "LeakyReluGrad", &leaky, kLeakyReluY, kLeakyReluDx);
  check_activation(d, "Softplus", "SoftplusGrad", nullptr, kSoftplusY, kSoftplusDx);
  axon_gelu_attrs gelu{};
  gelu.struct_size = sizeof gelu;
  check_activation(d, "Gelu", "GeluGrad", &gelu, kGeluErfY, kGeluErfDx);
  gelu.approximate = 1;
  check_activation(d, "Gelu", "GeluGrad", &gelu, kGeluTanhY, kGeluTanhDx);
  check_activation(d, "Silu", "SiluGrad", nullptr, kSiluY, kSiluDx);
  // ClippedRelu (0.1, 6, 0.5): at the kinks x = 0.5 and x = 6 the op
  // table's rule (activation_math_test.cpp).
  axon_clipped_relu_attrs clipped{};
  clipped.struct_size = sizeof clipped;
  clipped.negative_slope = 0.1f, clipped.max_value = 6.f, clipped.threshold = 0.5f;
  std::vector<float> table = kClippedRelu1Dx;
  for (size_t i = 0; i < kX.size(); ++i)
    if (kX[i] == 0.5f || kX[i] == 6.f) table[i] = kX[i] == 0.5f ? 0.1f * kDy[i] : 0.f;
  check_activation(d, "ClippedRelu", "ClippedReluGrad", &clipped, kClippedRelu1Y, kClippedRelu1Dx, &table);
}

TEST_CASE("a kernel call on another stream runs joined to it both ways, with the same results") {
  axon::fake::reset();
  Device d(0);
  axon_stream s = nullptr;
  axon_error err{};
  REQUIRE(d.api.stream_create(d.api.device_ctx, &s, &err) == AXON_OK);
  const std::vector<int64_t> shape = {static_cast<int64_t>(kX.size())};
  Tensor x(shape, kX), on_device(shape), on_stream(shape);
  auto refs = [](Tensor& t) { return std::vector<axon_tensor>{t.ref()}; };
  const int waits = axon::fake::record().stream_waits;
  REQUIRE(run(d, "Sigmoid", refs(x), refs(on_device), nullptr).message == "");
  CHECK(axon::fake::record().stream_waits == waits);  // the device's own stream: nothing to join
  REQUIRE(run(d, "Sigmoid", refs(x), refs(on_stream), nullptr, s).message == "");
  CHECK(axon::fake::record().stream_waits == waits + 2);  // the device's stream after s, s after the kernel
  CHECK(on_stream.data == on_device.data);
  d.api.stream_destroy(d.api.device_ctx, s);
}

TEST_CASE("Sub, Mul, Maximum, MaximumGrad and MovingAverage through the plugin's kernels") {
  axon::fake::reset();
  Device d(0);
  const std::vector<int64_t> s = {static_cast<int64_t>(kA.size())};
  Tensor a(s, kA), b(s, kB), y(s);
  for (auto [op, want] : {std::pair{"Sub", &kSub}, {"Mul", &kMul}, {"Maximum", &kMaximum}}) {
    REQUIRE(run(d, op, {&a, &b}, {&y}, nullptr).message == "");
    for (size_t i = 0; i < y.data.size(); ++i) {
      INFO(op << "(" << kA[i] << ", " << kB[i] << ") = " << y.data[i] << ", TensorFlow " << (*want)[i]);
      CHECK((y.data[i] == (*want)[i] || (std::isnan(y.data[i]) && std::isnan((*want)[i]))));
    }
  }
  // MaximumGrad: da = dy where a >= b (ties to a), db = dy elsewhere (NaN included, as TensorFlow's).
  Tensor dy(s, std::vector<float>(kA.size(), 3.f)), da(s), db(s);
  REQUIRE(run(d, "MaximumGrad", {&dy, &a, &b}, {&da, &db}, nullptr).message == "");
  for (size_t i = 0; i < kA.size(); ++i) {
    INFO("a " << kA[i] << " b " << kB[i]);
    CHECK(da.data[i] == (kA[i] >= kB[i] ? 3.f : 0.f));
    CHECK(db.data[i] == (kA[i] >= kB[i] ? 0.f : 3.f));
  }
  axon_moving_average_attrs ma{};
  ma.struct_size = sizeof ma;
  ma.momentum = 0.9f;
  ma.weight = 0.1f;
  Tensor var({3}, {1.f, 2.f, 3.f}), value({3}, {10.f, 20.f, 30.f});
  REQUIRE(run(d, "MovingAverage", {&var, &value}, std::vector<Tensor*>{}, &ma).message == "");
  CHECK(var.data == std::vector<float>{0.9f * 1.f + 0.1f * 10.f, 0.9f * 2.f + 0.1f * 20.f, 0.9f * 3.f + 0.1f * 30.f});
}

TEST_CASE("Softmax and SoftmaxGrad run over the last dimension") {
  axon::fake::reset();
  Device d(0);
  // kBnX as [2, 3, 4, 5]: 24 rows of 5.
  Tensor x({2, 3, 4, 5}, kBnX), y({2, 3, 4, 5}), dy({2, 3, 4, 5}, kBnDy), dx({2, 3, 4, 5});
  REQUIRE(run(d, "Softmax", {&x}, {&y}, nullptr).message == "");
  REQUIRE(run(d, "SoftmaxGrad", {&dy, &y}, {&dx}, nullptr).message == "");
  std::vector<float> want_y(kBnX.size()), want_dx(kBnX.size());
  for (size_t r = 0; r < 24; ++r) {
    double mx = -INFINITY, sum = 0, dot = 0;
    for (size_t c = 0; c < 5; ++c) mx = std::max(mx, double(kBnX[r * 5 + c]));
    for (size_t c = 0; c < 5; ++c) sum += std::exp(kBnX[r * 5 + c] - mx);
    for (size_t c = 0; c < 5; ++c) want_y[r * 5 + c] = static_cast<float>(std::exp(kBnX[r * 5 + c] - mx) / sum);
    for (size_t c = 0; c < 5; ++c) dot += double(kBnDy[r * 5 + c]) * y.data[r * 5 + c];
    for (size_t c = 0; c < 5; ++c)
      want_dx[r * 5 + c] = static_cast<float>((kBnDy[r * 5 + c] - dot) * y.data[r * 5 + c]);
  }
  expect_close(y.data, want_y, ones(want_y.size()), "Softmax");
  expect_close(dx.data, want_dx, ones(want_dx.size()), "SoftmaxGrad");
}

TEST_CASE("ConcatV2, Slice and Pad place their tensors where the op table says") {
  axon::fake::reset();
  Device d(0);
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6}), e({2, 0}, std::vector<float>{}), b({2, 1}, {7, 8}), y({2, 4});
  axon_concat_attrs ca{};
  ca.struct_size = sizeof ca;
  ca.axis = 1;
  REQUIRE(run(d, "ConcatV2", {&a, &e, &b}, {&y}, &ca).message == "");
  CHECK(y.data == std::vector<float>{1, 2, 3, 7, 4, 5, 6, 8});
  Tensor y0({5, 3});
  ca.axis = 0;
  Tensor c({3, 3}, {9, 10, 11, 12, 13, 14, 15, 16, 17});
  REQUIRE(run(d, "ConcatV2", {&a, &c}, {&y0}, &ca).message == "");
  CHECK(y0.data == std::vector<float>{1, 2, 3, 4, 5, 6, 9, 10, 11, 12, 13, 14, 15, 16, 17});
  axon_slice_attrs sa{};
  sa.struct_size = sizeof sa;
  sa.begin[0] = 1, sa.begin[1] = 1;
  Tensor s({2, 2});
  REQUIRE(run(d, "Slice", {&c}, {&s}, &sa).message == "");
  CHECK(s.data == std::vector<float>{13, 14, 16, 17});
  Tensor p({3, 4});
  REQUIRE(run(d, "Pad", {&a}, {&p}, &sa).message == "");
  CHECK(p.data == std::vector<float>{0, 0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6});
}

TEST_CASE("FusedBatchNormV3 and its gradient write what TensorFlow's write, in training and inference") {
  axon::fake::reset();
  Device d(0);
  const std::vector<int64_t> s = {2, 3, 4, 5}, ch = {5};
  Tensor x(s, kBnX), dy(s, kBnDy), scale(ch, kBnScale), offset(ch, kBnOffset), mean(ch, kBnMean), var(ch, kBnVariance);
  auto close = [](const Tensor& t, const std::vector<float>& want, const std::string& what) {
    std::vector<double> scale_of(want.size());
    for (size_t i = 0; i < want.size(); ++i) scale_of[i] = 20 * (1 + std::fabs(want[i]));  // 2e-6 (1 + |tf|)
    expect_close(t.data, want, scale_of, what);
  };
  struct Mode {
    int training;
    float factor;
    const std::vector<float>*y, *batch_mean, *batch_var, *r1, *r2, *dx, *scale_bp, *offset_bp;
  };
  const Mode modes[] = {{1, 1.f, &kBnTrainY, &kBnTrainBatchMean, &kBnTrainBatchVariance, &kBnTrainReserve1,
                         &kBnTrainReserve2, &kBnTrainDx, &kBnTrainScaleBackprop, &kBnTrainOffsetBackprop},
                        {1, 0.3f, &kBnTrainAvgY, &kBnTrainAvgBatchMean, &kBnTrainAvgBatchVariance, &kBnTrainAvgReserve1,
                         &kBnTrainAvgReserve2, &kBnTrainAvgDx, &kBnTrainAvgScaleBackprop, &kBnTrainAvgOffsetBackprop},
                        {0, 1.f, &kBnInferY, &kBnInferBatchMean, &kBnInferBatchVariance, &kBnInferReserve1,
                         &kBnInferReserve2, &kBnInferDx, &kBnInferScaleBackprop, &kBnInferOffsetBackprop}};
  for (const Mode& m : modes) {
    const std::string what = m.training ? "training, factor " + std::to_string(m.factor) : "inference";
    axon_batch_norm_attrs a{};
    a.struct_size = sizeof a;
    a.epsilon = 0.001f;
    a.exponential_avg_factor = m.factor;
    a.is_training = m.training;
    Tensor y(s), bm(ch), bv(ch), r1(ch), r2(ch);
    REQUIRE(run(d, "FusedBatchNormV3", {&x, &scale, &offset, &mean, &var}, {&y, &bm, &bv, &r1, &r2}, &a).message == "");
    close(y, *m.y, what + " y");
    close(bm, *m.batch_mean, what + " batch_mean");
    close(bv, *m.batch_var, what + " batch_variance");
    close(r1, *m.r1, what + " reserve_space_1");
    close(r2, *m.r2, what + " reserve_space_2");
    Tensor dx(s), sb(ch), ob(ch);
    REQUIRE(run(d, "FusedBatchNormGradV3", {&dy, &x, &scale, &r1, &r2}, {&dx, &sb, &ob}, &a).message == "");
    close(dx, *m.dx, what + " dx");
    close(sb, *m.scale_bp, what + " scale_backprop");
    close(ob, *m.offset_bp, what + " offset_backprop");
  }
  // Inference with y alone.
  axon_batch_norm_attrs a{};
  a.struct_size = sizeof a;
  a.epsilon = 0.001f;
  a.exponential_avg_factor = 1.f;
  Tensor y(s);
  REQUIRE(run(d, "FusedBatchNormV3", {&x, &scale, &offset, &mean, &var}, {&y}, &a).message == "");
  close(y, kBnInferY, "inference, y alone");
}

TEST_CASE("_FusedBatchNormEx and its gradient equal FusedBatchNormV3 then relu, and its gradient of the masked dy") {
  axon::fake::reset();
  Device d(0);
  const std::vector<int64_t> s = {2, 3, 4, 5}, ch = {5};
  Tensor x(s, kBnX), dy(s, kBnDy), scale(ch, kBnScale), offset(ch, kBnOffset), mean(ch, kBnMean), var(ch, kBnVariance);
  for (int training : {1, 0}) {
    INFO((training ? "training" : "inference"));
    const axon_batch_norm_attrs a{sizeof(axon_batch_norm_attrs), 0.001f, 1.f, training};
    const axon_fused_batch_norm_attrs fa{sizeof(axon_fused_batch_norm_attrs), a, AXON_ACTIVATION_RELU};
    Tensor y(s), bm(ch), bv(ch), r1(ch), r2(ch), plain(s), pbm(ch), pbv(ch), pr1(ch), pr2(ch);
    REQUIRE(run(d, "_FusedBatchNormEx", {&x, &scale, &offset, &mean, &var}, {&y, &bm, &bv, &r1, &r2}, &fa).message ==
            "");
    REQUIRE(run(d, "FusedBatchNormV3", {&x, &scale, &offset, &mean, &var}, {&plain, &pbm, &pbv, &pr1, &pr2}, &a)
                .message == "");
    size_t cut = 0;
    for (size_t i = 0; i < y.data.size(); ++i) {
      CHECK(y.data[i] == std::max(plain.data[i], 0.f));
      cut += plain.data[i] <= 0.f;
    }
    CHECK(cut > 0);  // the relu had work to do
    CHECK(bm.data == pbm.data);
    CHECK(bv.data == pbv.data);
    CHECK(r1.data == pr1.data);
    CHECK(r2.data == pr2.data);
    Tensor masked(s, dy.data);
    for (size_t i = 0; i < masked.data.size(); ++i)
      if (!(y.data[i] > 0.f)) masked.data[i] = 0.f;
    Tensor dx(s), sb(ch), ob(ch), want_dx(s), want_sb(ch), want_ob(ch);
    REQUIRE(run(d, "_FusedBatchNormGradEx", {&dy, &x, &scale, &r1, &r2, &y}, {&dx, &sb, &ob}, &fa).message == "");
    REQUIRE(run(d, "FusedBatchNormGradV3", {&masked, &x, &scale, &r1, &r2}, {&want_dx, &want_sb, &want_ob}, &a)
                .message == "");
    CHECK(dx.data == want_dx.data);
    CHECK(sb.data == want_sb.data);
    CHECK(ob.data == want_ob.data);
  }
}

// Tolerance 0 against the compositions: the fused passes do the same float
// operations in the same order (normalize, add the side input, relu; dy
// masked, then the same sums), so any difference is a bug, not rounding.
TEST_CASE("_FusedBatchNormAddEx and its gradient equal FusedBatchNormV3, the side input added, then relu, and "
          "FusedBatchNormGradV3 of ReluGrad's dy") {
  axon::fake::reset();
  Device d(0);
  const std::vector<int64_t> s = {2, 3, 4, 5}, ch = {5};
  Tensor x(s, kBnX), dy(s, kBnDy), scale(ch, kBnScale), offset(ch, kBnOffset), mean(ch, kBnMean), var(ch, kBnVariance);
  Tensor side(s, 0.25f);  // -1.5 .. 1.5: moves values across relu's kink both ways
  for (int training : {1, 0})
    for (int32_t act : {AXON_ACTIVATION_RELU, AXON_ACTIVATION_NONE}) {
      const bool relu = act == AXON_ACTIVATION_RELU;
      INFO((training ? "training" : "inference") << (relu ? ", relu" : ", no activation"));
      const axon_batch_norm_attrs a{sizeof(axon_batch_norm_attrs), 0.001f, 1.f, training};
      const axon_fused_batch_norm_attrs fa{sizeof(axon_fused_batch_norm_attrs), a, act};
      Tensor y(s), bm(ch), bv(ch), r1(ch), r2(ch), plain(s), pbm(ch), pbv(ch), pr1(ch), pr2(ch);
      REQUIRE(run(d, "_FusedBatchNormAddEx", {&x, &scale, &offset, &mean, &var, &side}, {&y, &bm, &bv, &r1, &r2},
                  &fa)
                  .message == "");
      REQUIRE(run(d, "FusedBatchNormV3", {&x, &scale, &offset, &mean, &var}, {&plain, &pbm, &pbv, &pr1, &pr2}, &a)
                  .message == "");
      // The composition: AddN(plain, side), then Relu; z keeps the sum's signs.
      Tensor z(s, plain.data);
      size_t cut = 0, flipped = 0;
      for (size_t i = 0; i < z.data.size(); ++i) {
        z.data[i] = plain.data[i] + side.data[i];
        const float want = relu ? (z.data[i] > 0.f ? z.data[i] : 0.f) : z.data[i];
        INFO("y[" << i << "]: " << y.data[i] << ", want " << want);
        CHECK(y.data[i] == want);
        cut += z.data[i] <= 0.f;
        flipped += (plain.data[i] > 0.f) != (z.data[i] > 0.f);
      }
      CHECK(cut > 0);      // relu had work to do
      CHECK(flipped > 0);  // and the side input, added before it, changed its choice
      CHECK(bm.data == pbm.data);
      CHECK(bv.data == pbv.data);
      CHECK(r1.data == pr1.data);
      CHECK(r2.data == pr2.data);
      // The gradient, with the forward's y (zeros and positives under relu)
      // and with z (both signs, no exact zeros).
      for (Tensor* y_in : {&y, &z}) {
        Tensor masked(s, dy.data);  // ReluGrad(dy, y): dy where y > 0; dy itself without relu
        if (relu)
          for (size_t i = 0; i < masked.data.size(); ++i)
            if (!(y_in->data[i] > 0.f)) masked.data[i] = 0.f;
        Tensor dx(s), sb(ch), ob(ch), sib(s), want_dx(s), want_sb(ch), want_ob(ch);
        REQUIRE(run(d, "_FusedBatchNormAddGradEx", {&dy, &x, &scale, &r1, &r2, y_in}, {&dx, &sb, &ob, &sib}, &fa)
                    .message == "");
        REQUIRE(run(d, "FusedBatchNormGradV3", {&masked, &x, &scale, &r1, &r2}, {&want_dx, &want_sb, &want_ob}, &a)
                    .message == "");
        CHECK(sib.data == masked.data);
        if (!relu) CHECK(sib.data == dy.data);
        CHECK(dx.data == want_dx.data);
        CHECK(sb.data == want_sb.data);
        CHECK(ob.data == want_ob.data);
      }
    }
}

TEST_CASE("AvgPool and AvgPoolGrad through the plugin's kernels agree with TensorFlow") {
  axon::fake::reset();
  Device d(0);
  struct Case {
    int k, s;
    axon_padding pad;
    const std::vector<float>&y, &dy, &dx;
  };
  const Case cases[] = {{3, 2, AXON_PADDING_SAME, kAvgS3s2SameY, kAvgS3s2SameDy, kAvgS3s2SameDx},
                        {2, 2, AXON_PADDING_VALID, kAvgS2s2ValidY, kAvgS2s2ValidDy, kAvgS2s2ValidDx},
                        {3, 1, AXON_PADDING_SAME, kAvgS3s1SameY, kAvgS3s1SameDy, kAvgS3s1SameDx}};
  for (const Case& c : cases) {
    axon_pool_attrs a{};
    a.struct_size = sizeof a;
    a.window_h = a.window_w = c.k;
    a.stride_h = a.stride_w = c.s;
    a.padding = c.pad;
    const int64_t oh = c.pad == AXON_PADDING_SAME ? (7 + c.s - 1) / c.s : (7 - c.k) / c.s + 1;
    const int64_t ow = c.pad == AXON_PADDING_SAME ? (6 + c.s - 1) / c.s : (6 - c.k) / c.s + 1;
    Tensor x({2, 7, 6, 3}, kPoolX), y({2, oh, ow, 3}), dy({2, oh, ow, 3}, c.dy), dx({2, 7, 6, 3});
    REQUIRE(run(d, "AvgPool", {&x}, {&y}, &a).message == "");
    REQUIRE(run(d, "AvgPoolGrad", {&dy}, {&dx}, &a).message == "");
    std::vector<double> sy(c.y.size()), sdx(c.dx.size());
    for (size_t i = 0; i < sy.size(); ++i) sy[i] = 20 * (1 + std::fabs(c.y[i]));
    for (size_t i = 0; i < sdx.size(); ++i) sdx[i] = 20 * (1 + std::fabs(c.dx[i]));
    expect_close(y.data, c.y, sy, "AvgPool");
    expect_close(dx.data, c.dx, sdx, "AvgPoolGrad");
  }
}
