// Bad input: every plugin answers a wrong rank, shape, dtype, arity or
// attribute with AXON_INVALID_ARGUMENT and a message naming the op (and the
// shapes), never a crash.
#include "kernel_test_util.hpp"

using namespace axon::test;

namespace {

struct Bad {
  const char* why;
  const char* op;
  std::vector<std::pair<axon_dtype, std::vector<int64_t>>> in, out;
  const void* attrs;
  const char* expect_in_message;  // besides the op name; "" for none
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

constexpr axon_dtype F = AXON_FLOAT32, I = AXON_INT32;

const std::vector<Bad> kBad{
    {"input rank 3", "Conv2D", {{F, {1, 5, 5}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConv, "[1,5,5]"},
    {"filter channels differ", "Conv2D", {{F, {1, 5, 5, 3}}, {F, {3, 3, 2, 2}}}, {{F, {1, 3, 3, 2}}}, &kConv, "[3,3,2,2]"},
    {"output shape wrong", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 4, 3, 2}}}, &kConv, "[1,3,3,2]"},
    {"attrs missing", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, nullptr, "attributes"},
    {"attrs too small", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvSmall, ""},
    {"stride 0", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvStride0, "stride"},
    {"unknown padding", "Conv2D", {{F, {1, 5, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 3, 3, 2}}}, &kConvBadPad, "padding"},
    {"filter larger than input", "Conv2D", {{F, {1, 2, 5, 1}}, {F, {3, 3, 1, 2}}}, {{F, {1, 1, 3, 2}}}, &kConv, "VALID"},
    {"too few inputs", "Conv2D", {{F, {1, 5, 5, 1}}}, {{F, {1, 3, 3, 2}}}, &kConv, ""},
    {"dy shape wrong", "Conv2DBackpropInput", {{F, {1, 3, 4, 2}}, {F, {3, 3, 1, 2}}}, {{F, {1, 5, 5, 1}}}, &kConv, "[1,3,4,2]"},
    {"filter rank 2", "Conv2DBackpropInput", {{F, {1, 3, 3, 2}}, {F, {9, 2}}}, {{F, {1, 5, 5, 1}}}, &kConv, "[9,2]"},
    {"dfilter shape wrong", "Conv2DBackpropFilter", {{F, {1, 5, 5, 1}}, {F, {1, 3, 3, 2}}}, {{F, {3, 3, 2, 2}}}, &kConv, ""},
    {"output shape wrong", "MaxPool", {{F, {1, 4, 4, 2}}}, {{F, {1, 2, 2, 3}}}, &kPool, "[1,2,2,3]"},
    {"window 0", "MaxPool", {{F, {1, 4, 4, 2}}}, {{F, {1, 2, 2, 2}}}, &kPoolWindow0, "window"},
    {"grad shape wrong", "MaxPoolGrad", {{F, {1, 4, 4, 2}}, {F, {1, 2, 2, 2}}, {F, {1, 2, 1, 2}}}, {{F, {1, 4, 4, 2}}}, &kPool, "[1,2,1,2]"},
    {"inner dims differ", "MatMul", {{F, {2, 3}}, {F, {4, 5}}}, {{F, {2, 5}}}, &kMatMul, "[2,3]"},
    {"rank 3", "MatMul", {{F, {2, 3, 1}}, {F, {3, 5}}}, {{F, {2, 5}}}, &kMatMul, "[2,3,1]"},
    {"bias length", "BiasAdd", {{F, {4, 3}}, {F, {4}}}, {{F, {4, 3}}}, nullptr, "[4]"},
    {"value rank 0", "BiasAdd", {{F, {}}, {F, {3}}}, {{F, {}}}, nullptr, "got shape []"},
    {"output length", "BiasAddGrad", {{F, {4, 3}}}, {{F, {4}}}, nullptr, "[4]"},
    {"shape mismatch", "Relu", {{F, {4, 3}}}, {{F, {3, 4}}}, nullptr, "[3,4]"},
    {"two inputs", "Relu", {{F, {4}}, {F, {4}}}, {{F, {4}}}, nullptr, ""},
    {"y shape differs", "ReluGrad", {{F, {4}}, {F, {5}}}, {{F, {4}}}, nullptr, "[5]"},
    {"labels float", "SparseSoftmaxCrossEntropyWithLogits", {{F, {2, 3}}, {F, {2}}}, {{F, {2}}, {F, {2, 3}}}, nullptr, "int32"},
    {"labels length", "SparseSoftmaxCrossEntropyWithLogits", {{F, {2, 3}}, {I, {3}}}, {{F, {2}}, {F, {2, 3}}}, nullptr, "[3]"},
    {"labels length", "InTopK", {{F, {2, 3}}, {I, {1}}}, {{F, {2}}}, nullptr, "[1]"},
    {"labels length", "_SparseCategoricalAccuracy", {{F, {2, 3}}, {I, {1}}}, {{F, {2}}}, nullptr, "[1]"},
    {"output length", "_SparseCategoricalAccuracy", {{F, {2, 3}}, {I, {2}}}, {{F, {3}}}, nullptr, "[3]"},
    {"m shape differs", "ApplyAdam", {{F, {4}}, {F, {5}}, {F, {4}}, {F, {4}}}, {}, &kAdam, "[5]"},
    {"step 0", "ApplyAdam", {{F, {4}}, {F, {4}}, {F, {4}}, {F, {4}}}, {}, &kAdamStep0, "step"},
    {"output not scalar", "Sum", {{F, {4, 3}}}, {{F, {2}}}, nullptr, "[2]"},
    {"attrs missing", "Fill", {}, {{F, {4}}}, nullptr, "attributes"},
    {"input shapes differ", "AddN", {{F, {4}}, {F, {3}}}, {{F, {4}}}, nullptr, "[3]"},
    {"output dtype differs", "Identity", {{F, {4}}}, {{I, {4}}}, nullptr, "int32"},
    {"output shape differs", "NormalizeImage", {{AXON_UINT8, {2, 2}}}, {{F, {4}}}, nullptr, "[4]"},
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

TEST_CASE("unknown ops and dtypes have no kernel", "[errors]") {
  for (TestDevice* dev : {&cpu(), &ref()}) {
    CHECK_FALSE(dev->has("Conv3D"));
    CHECK_FALSE(dev->has("Conv2D", AXON_INT32));
    CHECK(dev->has("NormalizeImage", AXON_UINT8));
    CHECK(dev->has("Identity", AXON_INT32));
  }
}
