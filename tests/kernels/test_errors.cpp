// Bad input: every plugin answers a wrong rank, shape, dtype, arity or
// attribute with AXON_INVALID_ARGUMENT and a message naming the op and the
// tensor (in the op table validator's words, op_validate.hpp), never a crash.
#include "kernel_test_util.hpp"

using namespace axon::test;

namespace {

struct Bad {
  const char* why;
  const char* op;
  std::vector<std::pair<axon_dtype, std::vector<int64_t>>> in, out;
  const void* attrs;
  const char* expect_in_message;  // besides the op name
};

const axon_conv2d_attrs kConv{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
const axon_conv2d_attrs kConvStride0{sizeof(axon_conv2d_attrs), 0, 1, 1, 1, AXON_PADDING_VALID};
const axon_conv2d_attrs kConvSmall{AXON_STRUCT_SIZE(axon_conv2d_attrs, stride_h), 1, 1, 1, 1, AXON_PADDING_VALID};
const axon_conv2d_attrs kConvBadPad{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, static_cast<axon_padding>(7)};
const axon_pool_attrs kPool{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID};
const axon_pool_attrs kPoolWindow0{sizeof(axon_pool_attrs), 0, 2, 2, 2, AXON_PADDING_VALID};
const axon_matmul_attrs kMatMul{sizeof(axon_matmul_attrs), 0, 0};
const axon_adam_attrs kAdam{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, 1};
const axon_adam_attrs kAdamStep0{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, 0};
const axon_fill_attrs kFill{sizeof(axon_fill_attrs), 1.0f};
const axon_leaky_relu_attrs kLeakyInf{sizeof(axon_leaky_relu_attrs), INFINITY};
const axon_clipped_relu_attrs kClipMaxNegative{sizeof(axon_clipped_relu_attrs), 0.1f, -1.0f, 0.0f};
const axon_gelu_attrs kGelu2{sizeof(axon_gelu_attrs), 2};
const axon_concat_attrs kConcatAxis2{sizeof(axon_concat_attrs), 2};
const axon_slice_attrs kSliceAt3{sizeof(axon_slice_attrs), {3, 0}};
const axon_moving_average_attrs kMovingAverage{sizeof(axon_moving_average_attrs), 0.99f, 0.01f};
const axon_reduce_attrs kReduceAxis2{sizeof(axon_reduce_attrs), 1, {2}, 0};
const axon_reduce_attrs kReduceAxisTwice{sizeof(axon_reduce_attrs), 2, {1, -1}, 0};
const axon_reduce_attrs kReduceAxis0{sizeof(axon_reduce_attrs), 1, {0}, 0};
const axon_reduce_attrs kReduceKeep2{sizeof(axon_reduce_attrs), 1, {0}, 2};
const axon_random_attrs kRandomNaN{sizeof(axon_random_attrs), {1, 2}, {0, 0, 0, 0}, NAN, 0.0f};

constexpr axon_dtype F = AXON_FLOAT32, I = AXON_INT32;

const std::vector<Bad> kBad{
    {"input rank 3", "Conv2D", {{F, {1, 5, 5}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConv,
     "x must have rank 4, got shape [1,5,5]"},
    {"filter channels differ", "Conv2D", {{F, {1, 5, 5, 3}}, {F, {3, 3, 2, 2}}}, {{F, {1, 3, 3, 2}}}, &kConv,
     "filter [3,3,2,2] has 2 input channels, x [1,5,5,3] has 3"},
    {"output shape wrong", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 4, 3, 2}}}, &kConv,
     "y has shape [1,4,3,2], expected [1,3,3,2]"},
    {"attrs missing", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, nullptr,
     "attributes missing (axon_conv2d_attrs)"},
    {"attrs too small", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvSmall,
     "attribute struct too small (axon_conv2d_attrs: 12 < 28 bytes)"},
    {"stride 0", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvStride0,
     "strides must be >= 1, got 0,1"},
    {"unknown padding", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvBadPad,
     "unknown padding 7"},
    {"filter larger than input", "Conv2D", {{F, {1, 2, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 1, 3, 2}}}, &kConv,
     "window 3x3 (dilated 3x3) is larger than x [1,2,5,1] with VALID padding"},
    {"too few inputs", "Conv2D", {{F, {1, 5, 5, 1}}}, {{F, {1, 3, 3, 2}}}, &kConv,
     "expected 2 inputs and 1 outputs, got 1 and 1"},
    {"dy shape wrong", "Conv2DBackpropInput", {{F, {1, 3, 4, 2}}, {F, {3, 3, 1, 2}}}, {{F, {1, 5, 5, 1}}}, &kConv,
     "dy has shape [1,3,4,2], expected [1,3,3,2]"},
    {"filter rank 2", "Conv2DBackpropInput", {{F, {1, 3, 3, 2}}, {F, {9, 2}}}, {{F, {1, 5, 5, 1}}}, &kConv,
     "filter must have rank 4, got shape [9,2]"},
    {"dfilter shape wrong", "Conv2DBackpropFilter", {{F, {1, 5, 5, 1}}, {F, {1, 3, 3, 2}}}, {{F, {3, 3, 2, 2}}}, &kConv,
     "dfilter [3,3,2,2] has 2 input channels, x [1,5,5,1] has 1"},
    {"output shape wrong", "MaxPool", {{F, {1, 4, 4, 2}}}, {{F, {1, 2, 2, 3}}}, &kPool,
     "y has shape [1,2,2,3], expected [1,2,2,2]"},
    {"window 0", "MaxPool", {{F, {1, 4, 4, 2}}}, {{F, {1, 2, 2, 2}}}, &kPoolWindow0, "window must be >= 1, got 0,2"},
    {"grad shape wrong", "MaxPoolGrad", {{F, {1, 4, 4, 2}}, {F, {1, 2, 2, 2}}, {F, {1, 2, 1, 2}}}, {{F, {1, 4, 4, 2}}}, &kPool,
     "dy has shape [1,2,1,2], expected y's [1,2,2,2]"},
    {"inner dims differ", "MatMul", {{F, {2, 3}}, {F, {4, 5}}}, {{F, {2, 5}}}, &kMatMul,
     "inner dimensions differ: a [2,3], b [4,5]"},
    {"rank 3", "MatMul", {{F, {2, 3, 1}}, {F, {3, 5}}}, {{F, {2, 5}}}, &kMatMul, "a must have rank 2, got shape [2,3,1]"},
    {"bias length", "BiasAdd", {{F, {4, 3}}, {F, {4}}}, {{F, {4, 3}}}, nullptr, "bias has shape [4], expected [3]"},
    {"value rank 1", "BiasAdd", {{F, {3}}, {F, {3}}}, {{F, {3}}}, nullptr, "x must have rank >= 2, got shape [3]"},
    {"output length", "BiasAddGrad", {{F, {4, 3}}}, {{F, {4}}}, nullptr, "dbias has shape [4], expected [3]"},
    {"shape mismatch", "Relu", {{F, {4, 3}}}, {{F, {3, 4}}}, nullptr, "y has shape [3,4], expected x's [4,3]"},
    {"two inputs", "Relu", {{F, {4}}, {F, {4}}}, {{F, {4}}}, nullptr, "expected 1 inputs and 1 outputs, got 2 and 1"},
    {"y shape differs", "ReluGrad", {{F, {4}}, {F, {5}}}, {{F, {4}}}, nullptr, "y has shape [5], expected dy's [4]"},
    {"labels float", "SparseSoftmaxCrossEntropyWithLogits", {{F, {2, 3}}, {F, {2}}}, {{F, {2}}, {F, {2, 3}}}, nullptr,
     "labels must be int32, got float32"},
    {"labels length", "SparseSoftmaxCrossEntropyWithLogits", {{F, {2, 3}}, {I, {3}}}, {{F, {2}}, {F, {2, 3}}}, nullptr,
     "labels has shape [3], expected [2]"},
    {"labels length", "InTopK", {{F, {2, 3}}, {I, {1}}}, {{F, {2}}}, nullptr, "labels has shape [1], expected [2]"},
    {"labels length", "_SparseCategoricalAccuracy", {{F, {2, 3}}, {I, {1}}}, {{F, {2}}}, nullptr,
     "labels has shape [1], expected [2]"},
    {"output length", "_SparseCategoricalAccuracy", {{F, {2, 3}}, {I, {2}}}, {{F, {3}}}, nullptr,
     "correct has shape [3], expected [2]"},
    {"m shape differs", "ApplyAdam", {{F, {4}}, {F, {5}}, {F, {4}}, {F, {4}}}, {}, &kAdam,
     "m has shape [5], expected var's [4]"},
    {"step 0", "ApplyAdam", {{F, {4}}, {F, {4}}, {F, {4}}, {F, {4}}}, {}, &kAdamStep0, "step must be >= 1, got 0"},
    {"output not scalar", "Sum", {{F, {4, 3}}}, {{F, {2}}}, nullptr, "y must be a scalar ([] or [1]), got shape [2]"},
    {"attrs missing", "Fill", {}, {{F, {4}}}, nullptr, "attributes missing (axon_fill_attrs)"},
    {"input shapes differ", "AddN", {{F, {4}}, {F, {3}}}, {{F, {4}}}, nullptr, "x has shape [3], expected x0's [4]"},
    {"output dtype differs", "Identity", {{F, {4}}}, {{I, {4}}}, nullptr, "y must be float32, got int32"},
    {"output shape differs", "NormalizeImage", {{AXON_UINT8, {2, 2}}}, {{F, {4}}}, nullptr,
     "y has shape [4], expected x's [2,2]"},
    {"dy shape differs", "SigmoidGrad", {{F, {4}}, {F, {5}}}, {{F, {4}}}, nullptr,
     "dy has shape [5], expected y's [4]"},
    {"alpha infinite", "LeakyRelu", {{F, {4}}}, {{F, {4}}}, &kLeakyInf, "alpha must be finite, got inf"},
    {"max_value negative", "ClippedRelu", {{F, {4}}}, {{F, {4}}}, &kClipMaxNegative,
     "max_value must be >= 0 (INFINITY for none), got -1"},
    {"approximate 2", "Gelu", {{F, {4}}}, {{F, {4}}}, &kGelu2, "approximate must be 0 or 1, got 2"},
    {"output transposed", "Softmax", {{F, {2, 3}}}, {{F, {3, 2}}}, nullptr,
     "y has shape [3,2], expected logits's [2,3]"},
    {"b shape differs", "Maximum", {{F, {2, 3}}, {F, {3}}}, {{F, {2, 3}}}, nullptr,
     "b has shape [3], expected a's [2,3]"},
    {"axis beyond the rank", "ConcatV2", {{F, {2, 3}}, {F, {2, 3}}}, {{F, {4, 3}}}, &kConcatAxis2,
     "axis 2 is outside x0's rank 2"},
    {"slice out of x", "Slice", {{F, {4, 4}}}, {{F, {2, 2}}}, &kSliceAt3,
     "y [2,2] does not fit in x [4,4] at begin[0] = 3"},
    {"value shape differs", "MovingAverage", {{F, {4}}, {F, {5}}}, {}, &kMovingAverage,
     "value has shape [5], expected var's [4]"},
    {"axis beyond the rank", "ReduceSum", {{F, {2, 3}}}, {{F, {2}}}, &kReduceAxis2,
     "axis 2 is out of range for x [2,3] (rank 2)"},
    {"an axis twice", "Mean", {{F, {2, 3}}}, {{F, {2}}}, &kReduceAxisTwice, "axis -1 is given twice for x [2,3]"},
    {"y's shape is not x's reduced", "Max", {{F, {2, 3}}}, {{F, {2}}}, &kReduceAxis0,
     "y has shape [2], expected [3] (x [2,3] reduced)"},
    {"keep_dims 2", "ReduceSum", {{F, {2, 3}}}, {{F, {3}}}, &kReduceKeep2, "keep_dims must be 0 or 1, got 2"},
    {"scale NaN", "StatelessRandomNormalV2", {}, {{F, {4}}}, &kRandomNaN, "scale must be finite"},
    {"attributes missing", "StatelessRandomUniformV2", {}, {{F, {4}}}, nullptr,
     "attributes missing (axon_random_attrs)"},
};

// Calls the kernel directly to see the status code.
axon_status call(TestDevice& dev, const Bad& b, std::string& message) {
  std::vector<std::unique_ptr<DeviceTensor>> keep;
  std::vector<axon_tensor> in, out;
  for (auto& [dt, dims] : b.in) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, dt, dims));
    in.push_back(keep.back()->t);
  }
  for (auto& [dt, dims] : b.out) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, dt, dims));
    out.push_back(keep.back()->t);
  }
  axon_dtype key = !in.empty() ? in[0].dtype : out[0].dtype;
  axon_kernel_fn fn = dev.api.get_kernel(dev.api.device_ctx, b.op, key);
  REQUIRE(fn != nullptr);
  axon_kernel_call c{sizeof(axon_kernel_call), b.op, static_cast<int32_t>(in.size()), in.data(),
                     static_cast<int32_t>(out.size()), out.data(), b.attrs};
  axon_error err{};
  axon_status s = fn(dev.api.device_ctx, &c, &err);
  message = err.message;
  return s;
}

void check_all(TestDevice& dev, const char* plugin) {
  for (const auto& b : kBad) {
    INFO(plugin << " " << b.op << ": " << b.why);
    std::string message;
    axon_status s = call(dev, b, message);
    INFO("message: " << message);
    CHECK(s == AXON_INVALID_ARGUMENT);
    CHECK(message.find(b.op) != std::string::npos);
    CHECK(message.find(b.expect_in_message) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("CPU plugin rejects bad input with INVALID_ARGUMENT naming the op", "[errors][cpu]") { check_all(cpu(), "cpu"); }

TEST_CASE("reference plugin rejects bad input with INVALID_ARGUMENT naming the op", "[errors][ref]") { check_all(ref(), "reference"); }

TEST_CASE("an out-of-range label is an error, and nothing is written", "[errors]") {
  for (TestDevice* dev : {&cpu(), &ref()}) {
    DeviceTensor l(*dev, AXON_FLOAT32, {2, 3}), lb(*dev, AXON_INT32, {2}), loss(*dev, AXON_FLOAT32, {2}), g(*dev, AXON_FLOAT32, {2, 3});
    l.upload(std::vector<float>(6, 0.5f));
    for (int32_t bad : {3, -1}) {
      lb.upload(std::vector<int32_t>{0, bad});
      loss.upload(std::vector<float>{7.0f, 7.0f});
      try {
        run_op(*dev, "SparseSoftmaxCrossEntropyWithLogits", {&l, &lb}, {&loss, &g});
        FAIL("label " << bad << " accepted");
      } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find("label " + std::to_string(bad)) != std::string::npos);
      }
      CHECK(loss.download<float>()[0] == 7.0f);
    }
  }
}

TEST_CASE("the losses of ABI 1.7 refuse a label out of range, naming it and its sample", "[errors]") {
  const axon_crossentropy_attrs xent{sizeof(axon_crossentropy_attrs), 1, 0.0f};
  const axon_regression_loss_attrs mse{sizeof(axon_regression_loss_attrs), AXON_LOSS_MEAN_SQUARED_ERROR, 1.0f};
  struct Bad {
    const char* op;
    int64_t units;
    int32_t label;
    const void* attrs;
  };
  // Binary cross-entropy reads 0 or 1; the others a class of the C units. A
  // regression loss on one unit reads any label (its target is the label).
  for (const Bad& b : {Bad{"BinaryCrossentropy", 1, 2, &xent}, Bad{"BinaryCrossentropy", 1, -1, &xent},
                       Bad{"CategoricalCrossentropy", 3, 3, &xent}, Bad{"RegressionLoss", 3, -1, &mse}})
    for (TestDevice* dev : {&cpu(), &ref()}) {
      INFO(b.op << " label " << b.label);
      DeviceTensor x(*dev, AXON_FLOAT32, {2, b.units}), lb(*dev, AXON_INT32, {2}), loss(*dev, AXON_FLOAT32, {2}),
          g(*dev, AXON_FLOAT32, {2, b.units});
      x.upload(std::vector<float>(static_cast<size_t>(2 * b.units), 0.5f));
      lb.upload(std::vector<int32_t>{0, b.label});
      try {
        run_op(*dev, b.op, {&x, &lb}, {&loss, &g}, b.attrs);
        FAIL("label accepted");
      } catch (const std::runtime_error& e) {
        CHECK(std::string(e.what()).find(std::string(b.op) + ": label " + std::to_string(b.label) + " at index 1") !=
              std::string::npos);
      }
    }
  DeviceTensor x(cpu(), AXON_FLOAT32, {2, 1}), lb(cpu(), AXON_INT32, {2}), loss(cpu(), AXON_FLOAT32, {2}),
      g(cpu(), AXON_FLOAT32, {2, 1});
  x.upload(std::vector<float>{1.0f, 9.0f});
  lb.upload(std::vector<int32_t>{3, 7});
  run_op(cpu(), "RegressionLoss", {&x, &lb}, {&loss, &g}, &mse);
  CHECK(loss.download<float>() == std::vector<float>{4.0f, 4.0f});
}

TEST_CASE("unknown ops and dtypes have no kernel", "[errors]") {
  for (TestDevice* dev : {&cpu(), &ref()}) {
    CHECK_FALSE(dev->has("Conv3D"));
    CHECK_FALSE(dev->has("Conv2D", AXON_INT32));
    CHECK(dev->has("NormalizeImage", AXON_UINT8));
    CHECK(dev->has("Identity", AXON_INT32));
  }
}
