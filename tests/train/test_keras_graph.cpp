// Functional Keras models: the reader's graph (Keras 3's and Keras 2's
// inbound nodes, topological order whatever the JSON's, one input and one
// output, Keras' Input((H, W)) of one-channel images), the merges' broadcast
// shapes, every kind of malformed graph refused with one line naming the
// file, the layer (index, class, name) and the reason, the writer's
// Functional JSON read back into the same graph, and a branched model's
// gradients (an output read by two layers sums their gradients) against
// finite differences on the CPU and reference devices.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/layers.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace axon;
using namespace axon::nn;
using Catch::Matchers::Contains;

namespace {

// One layer of a Keras 3 functional model: its config's extra keys (JSON
// text) and the layers it reads.
struct L {
  std::string cls, name, config;
  std::vector<std::string> reads;
};

std::string tensor(const std::string& from) {
  return R"({"class_name": "__keras_tensor__", "config": {"shape": [null], "dtype": "float32", "keras_history": [")" +
         from + R"(", 0, 0]}})";
}

// A Keras 3 Functional JSON (input "input_layer" of 8x8x1), output `output`.
std::string functional(const std::vector<L>& layers, const std::string& output, const std::string& input_extra = "") {
  std::string s = R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "g", )"
                  R"("layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": )"
                  R"("input_layer"}, "name": "input_layer", "inbound_nodes": []})";
  for (const L& l : layers) {
    std::string args;
    for (const std::string& r : l.reads) args += (args.empty() ? "" : ", ") + tensor(r);
    if (l.reads.size() != 1) args = "[" + args + "]";
    s += R"(, {"class_name": ")" + l.cls + R"(", "config": {"name": ")" + l.name + "\"" +
         (l.config.empty() ? "" : ", " + l.config) + R"(}, "name": ")" + l.name +
         R"(", "inbound_nodes": [{"args": [)" + args + R"(], "kwargs": {}}]})";
  }
  s += R"(], "input_layers": [["input_layer", 0, 0])" + input_extra + R"(], "output_layers": [[")" + output +
       R"(", 0, 0]]}})";
  return s;
}

const std::string kConv8 = R"("filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu")";

// input -> a (conv) -> b (conv) ; add(a, b) -> flatten -> dense
std::vector<L> residual() {
  return {{"Conv2D", "a", kConv8, {"input_layer"}},
          {"Conv2D", "b", R"("filters": 4, "kernel_size": [3, 3], "padding": "same")", {"a"}},
          {"Add", "add", "", {"a", "b"}},
          {"Flatten", "flatten", "", {"add"}},
          {"Dense", "dense", R"("units": 10)", {"flatten"}}};
}

void refused(const std::string& json, const std::vector<std::string>& must) {
  try {
    model_from_keras_json(json, "m.json");
    FAIL("accepted: " << json);
  } catch (const UsageError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find('\n') == std::string::npos);
    CHECK_THAT(what, Contains("m.json: "));
    for (const std::string& m : must) CHECK_THAT(what, Contains(m));
  }
}

}  // namespace

TEST_CASE("functional models: the graph, in topological order whatever the JSON's", "[keras][graph]") {
  std::vector<L> ls = residual();
  // The JSON lists the Add before the layer it reads: the reader reorders.
  std::swap(ls[1], ls[2]);
  const KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
  REQUIRE(k.model->num_nodes() == 5);
  std::vector<std::string> names;
  for (Layer* l : k.model->layers()) names.push_back(l->name());
  CHECK(names == std::vector<std::string>{"a", "b", "add", "flatten", "dense"});
  CHECK(k.model->node_inputs(0) == std::vector<int>{kModelInput});
  CHECK(k.model->node_inputs(2) == std::vector<int>{0, 1});
  CHECK_FALSE(k.model->is_chain());
  CHECK(k.input_shape == Shape{8, 8, 1});
  CHECK(k.output_shape == Shape{10});
  // Weights in model order, with Keras' names.
  REQUIRE(k.weights.size() == 6);
  CHECK(k.weights[0].first == "a/kernel");
  CHECK(k.weights[2].first == "b/kernel");
  CHECK(k.weights[4] == std::pair<std::string, Shape>{"dense/kernel", {256, 10}});

  // Written back as a Functional, it reads as the same graph.
  const KerasModel again = model_from_keras_json(keras_json(*k.model, k.input_shape), "written");
  REQUIRE(again.model->num_nodes() == 5);
  for (int i = 0; i < 5; ++i) CHECK(again.model->node_inputs(i) == k.model->node_inputs(i));
  CHECK(again.weights == k.weights);
  CHECK(keras_json(*again.model, again.input_shape) == keras_json(*k.model, k.input_shape));
}

TEST_CASE("a layer named input_layer: the written model's input takes the next free name", "[keras][graph]") {
  for (const bool chain : {true, false}) {
    Model m;
    const int a = m.add_node(std::make_unique<Flatten>("input_layer"), {kModelInput});
    const int b = m.add_node(std::make_unique<Dense>(4, Activation::linear, "input_layer_1"), {a});
    const int c = m.add_node(std::make_unique<Dense>(4, Activation::linear, "c"), {b});
    if (!chain) m.add_node(std::make_unique<Merge>(Merge::Kind::add, "add"), {b, c});
    INFO((chain ? "Sequential" : "Functional"));
    const std::string written = keras_json(m, {8, 8, 1});
    CHECK_THAT(written, Contains(R"("name":"input_layer_2")"));
    const KerasModel again = model_from_keras_json(written, "written");
    CHECK(again.model->num_nodes() == m.num_nodes());
  }
}

TEST_CASE("functional models in Keras 2's layout read as Keras 3's", "[keras][graph]") {
  const std::string keras2 =
      R"({"class_name": "Functional", "config": {"name": "model", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 1], "dtype": "float32", "name": "input_1"}, "name": "input_1", "inbound_nodes": []},)"
      R"({"class_name": "Conv2D", "config": {"name": "conv2d", "filters": 4, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}, "name": "conv2d", "inbound_nodes": [[["input_1", 0, 0, {}]]]},)"
      R"({"class_name": "Conv2D", "config": {"name": "conv2d_1", "filters": 4, "kernel_size": [1, 1]}, "name": "conv2d_1", "inbound_nodes": [[["conv2d", 0, 0, {}]]]},)"
      R"({"class_name": "Add", "config": {"name": "add"}, "name": "add", "inbound_nodes": [[["conv2d", 0, 0, {}], ["conv2d_1", 0, 0, {}]]]},)"
      R"({"class_name": "GlobalAveragePooling2D", "config": {"name": "gap"}, "name": "gap", "inbound_nodes": [[["add", 0, 0, {}]]]},)"
      R"({"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "softmax"}, "name": "dense", "inbound_nodes": [[["gap", 0, 0, {}]]]}],)"
      R"("input_layers": [["input_1", 0, 0]], "output_layers": [["dense", 0, 0]]}})";
  const KerasModel k = model_from_keras_json(keras2, "keras2.json");
  REQUIRE(k.model->num_nodes() == 5);
  CHECK(k.model->node_inputs(2) == std::vector<int>{0, 1});
  CHECK(k.output_shape == Shape{10});
}

TEST_CASE("malformed functional models are refused with one line naming file, layer and reason", "[keras][graph]") {
  SECTION("a cycle") {
    std::vector<L> ls = residual();
    ls[0].reads = {"b"};
    refused(functional(ls, "dense"), {"a, b", "cycle"});
  }
  SECTION("a layer reading a name that does not exist") {
    std::vector<L> ls = residual();
    ls[3].reads = {"nothere"};
    refused(functional(ls, "dense"), {"layers[4]", "Flatten 'flatten'", "'nothere'", "no layer of the model"});
  }
  SECTION("a layer called twice (shared weights)") {
    std::string j = functional(residual(), "dense");
    const std::string node = R"({"args": [)" + tensor("input_layer") + R"(], "kwargs": {}})";
    const size_t at = j.find(R"("inbound_nodes": [{"args")", j.find(R"("name": "a")"));
    j.insert(j.find('[', at) + 1, node + ", ");
    refused(j, {"layers[1]", "Conv2D 'a'", "called 2 times", "share"});
  }
  SECTION("two outputs") {
    std::string j = functional(residual(), "dense");
    j.replace(j.find(R"([["dense", 0, 0]])"), 17, R"([["dense", 0, 0], ["add", 0, 0]])");
    refused(j, {"2 output_layers", "one input and one output"});
  }
  SECTION("two inputs") {
    refused(functional(residual(), "dense", R"(, ["input_layer_2", 0, 0])"), {"2 input_layers", "one input"});
  }
  SECTION("a layer that does not reach the output") {
    std::vector<L> ls = residual();
    ls.push_back({"Conv2D", "stray", kConv8, {"a"}});
    refused(functional(ls, "dense"), {"layers[6]", "Conv2D 'stray'", "does not reach the model's output 'dense'"});
  }
  SECTION("Add of mismatched shapes names both") {
    std::vector<L> ls = residual();
    ls[1].config = R"("filters": 5, "kernel_size": [3, 3], "padding": "same")";
    refused(functional(ls, "dense"), {"layers[3]", "Add 'add'", "[8,8,4]", "[8,8,5]"});
  }
  SECTION("a merge whose sizes neither match nor are 1 names the input that set the size") {
    std::vector<L> ls = residual();
    ls[2] = {"Multiply", "add", "", {"gate", "b", "b5"}};
    ls.insert(ls.begin() + 2, {"GlobalAveragePooling2D", "gate", R"("keepdims": true)", {"a"}});  // [1,1,4]
    ls.insert(ls.begin() + 3, {"Conv2D", "b5", R"("filters": 5, "kernel_size": [3, 3], "padding": "same")", {"a"}});
    refused(functional(ls, "dense"), {"Multiply 'add'", "differ in shape: [1,1,4] and [8,8,5]", "equal or 1"});
  }
  SECTION("Concatenate of inputs that differ off the axis") {
    std::vector<L> ls = residual();
    ls[1].config = R"("filters": 4, "kernel_size": [3, 3])";  // valid: 6x6
    ls[2] = {"Concatenate", "add", R"("axis": -1)", {"a", "b"}};
    refused(functional(ls, "dense"), {"Concatenate 'add'", "[8,8,4]", "[6,6,4]", "differ off the concatenation axis"});
  }
  SECTION("an unsupported layer lists what is supported") {
    std::vector<L> ls = residual();
    ls[3].cls = "LSTM";
    refused(functional(ls, "dense"), {"layers[4]", "LSTM 'flatten'", "supported: InputLayer, ", "BatchNormalization",
                                      "Concatenate"});
  }
  SECTION("a merge with one input") {
    std::vector<L> ls = residual();
    ls[2].reads = {"b"};
    refused(functional(ls, "dense"), {"Add 'add'", "takes from 2 to 64 inputs, got 1"});
  }
  SECTION("an output that is not [classes]") {
    std::vector<L> ls = residual();
    ls.resize(3);
    refused(functional(ls, "add"), {"layers[3]", "Add 'add'", "[8,8,4]", "[classes]"});
  }
  SECTION("settings a float cannot hold, or no shape can take") {
    auto chain = [](const char* cls, const char* config) {
      return std::vector<L>{{cls, "x", config, {"input_layer"}},
                            {"Flatten", "flatten", "", {"x"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(chain("Rescaling", R"("scale": 1e300)"), "dense"), {"Rescaling 'x'", "scale is 1e+300, too large"});
    refused(functional(chain("Dropout", R"("rate": 0.99999999)"), "dense"),
            {"Dropout 'x'", "rate is 0.99999999, not from 0 to below 1"});
    // The known sizes' product overflows int64 before the -1 is solved.
    refused(functional(chain("Reshape", R"("target_shape": [262144, 262144, 262144, 262144, -1])"), "dense"),
            {"Reshape 'x'", "cannot reshape [8,8,1]"});
  }
  SECTION("Conv2DTranspose settings axon does not compute") {
    auto chain = [](const char* config) {
      return std::vector<L>{{"Conv2DTranspose", "t", config, {"input_layer"}},
                            {"Flatten", "flatten", "", {"t"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(chain(R"("filters": 2, "kernel_size": 3, "strides": 2, "output_padding": [2, 1])"), "dense"),
            {"Conv2DTranspose 't'", "output_padding is [2,1]; each must be less than its stride (2, 2)"});
    refused(functional(chain(R"("filters": 2, "kernel_size": 3, "output_padding": 1)"), "dense"),
            {"Conv2DTranspose 't'", "output_padding is 1; each must be less than its stride (1, 1)"});
    // SAME with an even kernel: 8 -> 7 * 2 + 0 + 0 = 14, which the convolution maps to 7.
    refused(functional(chain(R"("filters": 2, "kernel_size": 4, "strides": 2, "padding": "same", "output_padding": 0)"),
                       "dense"),
            {"Conv2DTranspose 't'", "output_padding 0 makes its output 14 high", "input's 8 (TensorFlow refuses it too)"});
    refused(functional(chain(R"("filters": 2, "kernel_size": 3, "dilation_rate": 2)"), "dense"),
            {"Conv2DTranspose 't'", "dilation_rate is 2; axon supports 1 only"});
    std::vector<L> twice = chain(R"("filters": 2, "kernel_size": 3, "strides": 64)");  // 8 -> 512 -> 32768
    twice.insert(twice.begin() + 1, {"Conv2DTranspose", "t2", R"("filters": 2, "kernel_size": 3, "strides": 64)", {"t"}});
    twice[2].reads = {"t2"};
    refused(functional(twice, "dense"), {"Conv2DTranspose 't2'", "output of 32768x32768 is larger than 4096 a side"});
  }
  SECTION("LayerNormalization, grouped Conv2D and LayerScale settings axon does not compute") {
    auto after_conv = [](const char* cls, const char* config) {
      return std::vector<L>{{"Conv2D", "c", kConv8, {"input_layer"}},
                            {cls, "x", config, {"c"}},
                            {"Flatten", "flatten", "", {"x"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(after_conv("LayerNormalization", R"("axis": [1, 3])"), "dense"),
            {"LayerNormalization 'x'", "normalises over axes that are not the last ones of [8,8,4]"});
    refused(functional(after_conv("LayerNormalization", R"("axis": 0)"), "dense"),
            {"LayerNormalization 'x'", "axis is 0, the batch"});
    refused(functional(after_conv("LayerNormalization", R"("axis": [5])"), "dense"),
            {"LayerNormalization 'x'", "axis 5 is outside the input [8,8,4]"});
    refused(functional(after_conv("LayerNormalization", R"("rms_scaling": true)"), "dense"),
            {"LayerNormalization 'x'", "rms_scaling is true"});
    refused(functional(after_conv("Conv2D", R"("filters": 6, "kernel_size": 3, "groups": 3)"), "dense"),
            {"Conv2D 'x'", "groups is 3 for an input of 4 channels, which it does not divide"});
    refused(functional(after_conv("Conv2D", R"("filters": 6, "kernel_size": 3, "groups": 4)"), "dense"),
            {"Conv2D 'x'", "filters (6) is not a multiple of groups (4)"});
    refused(functional(after_conv("LayerScale", R"("init_values": 0.1, "projection_dim": 5)"), "dense"),
            {"LayerScale 'x'", "scales 5 channels; its input is [8,8,4]"});
  }
  SECTION("CustomScaleLayer settings and inputs axon does not take") {
    auto scaled = [](const char* config, const char* second) {
      return std::vector<L>{{"Conv2D", "c", kConv8, {"input_layer"}},
                            {"Conv2D", "d", R"("filters": 2, "kernel_size": 1)", {"c"}},
                            {"CustomScaleLayer", "x", config, {"c", second}},
                            {"Flatten", "flatten", "", {"x"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(scaled("", "c"), "dense"), {"CustomScaleLayer 'x'", "has no scale"});
    refused(functional(scaled(R"("scale": "0.17")", "c"), "dense"),
            {"CustomScaleLayer 'x'", "scale is \"0.17\"; axon takes one number"});
    refused(functional(scaled(R"("scale": 1e300)", "c"), "dense"), {"CustomScaleLayer 'x'", "scale is 1e+300"});
    refused(functional(scaled(R"("scale": 0.17)", "d"), "dense"),
            {"CustomScaleLayer 'x'", "its inputs differ in shape: [8,8,4] and [8,8,2]"});
    std::vector<L> one = scaled(R"("scale": 0.17)", "c");
    one[2].reads = {"d"};
    refused(functional(one, "dense"), {"CustomScaleLayer 'x'", "takes 2 inputs, got 1"});
  }
  SECTION("GroupNormalization settings axon does not take") {
    auto after_conv = [](const char* config) {
      return std::vector<L>{{"Conv2D", "c", kConv8, {"input_layer"}},
                            {"GroupNormalization", "x", config, {"c"}},
                            {"Flatten", "flatten", "", {"x"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(after_conv(R"("groups": 3)"), "dense"),
            {"GroupNormalization 'x'", "3 groups do not divide the input's 4 channels"});
    refused(functional(after_conv(R"("groups": 0)"), "dense"), {"GroupNormalization 'x'", "groups is 0"});
    refused(functional(after_conv(R"("groups": 2, "axis": 1)"), "dense"),
            {"GroupNormalization 'x'", "axis is 1; axon groups the last axis (-1) only"});
    refused(functional(after_conv(R"("groups": 2, "gamma_constraint": {"class_name": "NonNeg", "config": {}})"),
                       "dense"),
            {"GroupNormalization 'x'", "gamma_constraint"});
    refused(functional(after_conv(R"("groups": 2, "epsilon": 0)"), "dense"),
            {"GroupNormalization 'x'", "epsilon is 0, not positive"});
  }
  SECTION("PReLU settings axon does not take") {
    auto after_conv = [](const char* config) {
      return std::vector<L>{{"Conv2D", "c", kConv8, {"input_layer"}},
                            {"PReLU", "x", config, {"c"}},
                            {"Flatten", "flatten", "", {"x"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(after_conv(R"("shared_axes": [2])"), "dense"),
            {"PReLU 'x'", "shared_axes leave alpha [8,1,4] for the input [8,8,4]", "not the last ones"});
    refused(functional(after_conv(R"("shared_axes": [4])"), "dense"),
            {"PReLU 'x'", "shared axis 4 is outside the input [8,8,4]"});
    refused(functional(after_conv(R"("shared_axes": [0])"), "dense"), {"PReLU 'x'", "shared_axes"});
    refused(functional(after_conv(R"("alpha_constraint": {"class_name": "NonNeg", "config": {}})"), "dense"),
            {"PReLU 'x'", "alpha_constraint"});
    refused(functional(after_conv(R"("alpha_regularizer": {"class_name": "OrthogonalRegularizer", "config": {}})"),
                       "dense"),
            {"PReLU 'x'", "alpha_regularizer is OrthogonalRegularizer"});
  }
  SECTION("models nested in a model, beyond one Sequential level") {
    auto nested = [](const char* cls, const char* config) {
      return std::vector<L>{{cls, "inner", config, {"input_layer"}},
                            {"Flatten", "flatten", "", {"inner"}},
                            {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    };
    refused(functional(nested("Sequential", R"("layers": [{"class_name": "Sequential", "config": {"name": "deeper", )"
                                            R"("layers": []}}])"),
                       "dense"),
            {"Sequential 'deeper'", "a model nested two levels deep (inside 'inner')"});
    refused(functional(nested("Sequential", R"("layers": [])"), "dense"),
            {"Sequential 'inner'", "a nested Sequential with no layers"});
    refused(functional(nested("Functional", R"("layers": [])"), "dense"),
            {"Functional 'inner'", "a nested functional model"});
    refused(functional(nested("Sequential", R"("layers": [{"class_name": "Dense", "config": {"name": "inner", )"
                                            R"("units": 3}}])"),
                       "dense"),
            {"Dense 'inner'", "the name is used by an earlier layer"});
  }
  SECTION("UpSampling2D settings axon does not compute") {
    std::vector<L> ls{{"UpSampling2D", "u", R"("size": [3, 2], "interpolation": "bilinear")", {"input_layer"}},
                      {"Flatten", "flatten", "", {"u"}},
                      {"Dense", "dense", R"("units": 10)", {"flatten"}}};
    // bilinear is read (its numbers: goldens.keras_models) and written back
    const KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
    const std::string written = keras_json(*k.model, k.input_shape);
    CHECK_THAT(written, Contains(R"("interpolation":"bilinear","name":"u","size":[3,2])"));
    CHECK(keras_json(*model_from_keras_json(written, "written").model, k.input_shape) == written);
    ls[0].config = R"("size": [2, 2], "interpolation": "bicubic")";
    refused(functional(ls, "dense"),
            {"UpSampling2D 'u'", "interpolation is \"bicubic\"; axon reads nearest and bilinear"});
    ls[0].config = R"("size": [64, 64])";  // 8 -> 512
    ls.insert(ls.begin() + 1, {"UpSampling2D", "u2", R"("size": 64)", {"u"}});
    ls[2].reads = {"u2"};
    refused(functional(ls, "dense"), {"UpSampling2D 'u2'", "output of 32768x32768 is larger than 4096 a side"});
  }
  SECTION("activations beyond the per-sample limits, before anything is allocated") {
    // 4096x4096 images: a 1x1 convolution into 2 channels outputs 2^25 values
    // a sample (the limit of one layer), 32 of them 2^30 (the limit of all).
    auto large = [](const std::vector<L>& ls, const std::string& out) {
      std::string text = functional(ls, out);
      const std::string small = "[null, 8, 8, 1]";
      for (size_t at = text.find(small); at != std::string::npos; at = text.find(small))
        text.replace(at, small.size(), "[null, 4096, 4096, 1]");
      return text;
    };
    std::vector<L> ls;
    for (int i = 0; i < 33; ++i)
      ls.push_back({"Conv2D", "c" + std::to_string(i), R"("filters": 2, "kernel_size": [1, 1])",
                    {i == 0 ? "input_layer" : "c" + std::to_string(i - 1)}});
    ls.push_back({"GlobalAveragePooling2D", "gap", "", {"c32"}});
    ls.push_back({"Dense", "dense", R"("units": 10)", {"gap"}});
    refused(large(ls, "dense"), {"layers[33]", "Conv2D 'c32'", "activations", "limit of 1073741824"});
    ls.erase(ls.begin() + 1, ls.begin() + 33);
    ls[0].config = R"("filters": 3, "kernel_size": [1, 1])";
    ls[1].reads = {"c0"};
    refused(large(ls, "dense"), {"layers[1]", "Conv2D 'c0'", "[4096,4096,3] per sample", "limit of 33554432 values"});
  }
}

// TensorFlow's beginner quickstart starts with Flatten(input_shape=(28, 28)):
// the images without their channel axis, which the layers reading the input
// see as [H, W] (a Dense there acts on each image row).
TEST_CASE("Keras' Input((H, W)) reads one-channel images without their channel axis", "[keras][graph]") {
  auto sequential = [](const std::string& batch_shape) {
    return R"({"class_name": "Sequential", "config": {"name": "rows", "layers": [)"
           R"({"class_name": "InputLayer", "config": {"batch_shape": )" +
           batch_shape + R"(, "name": "input_layer"}},)"
           R"({"class_name": "Dense", "config": {"name": "row", "units": 3}},)"
           R"({"class_name": "Flatten", "config": {"name": "flatten"}},)"
           R"({"class_name": "Dense", "config": {"name": "dense", "units": 10}}]}})";
  };
  KerasModel k = model_from_keras_json(sequential("[null, 8, 6]"), "m.json");
  CHECK(k.input_shape == Shape{8, 6, 1});  // the images
  REQUIRE(k.weights.size() == 4);
  CHECK(k.weights[0] == std::pair<std::string, Shape>{"row/kernel", {6, 3}});
  CHECK(k.weights[2] == std::pair<std::string, Shape>{"dense/kernel", {24, 10}});
  CHECK(k.model->graph_input(k.input_shape) == Shape{8, 6});
  const std::string written = keras_json(*k.model, k.input_shape);
  CHECK_THAT(written, Contains(R"("batch_shape":[null,8,6])"));
  CHECK(model_from_keras_json(written, "written").weights == k.weights);
  CHECK_THAT(k.model->summary(k.input_shape), Contains("(None, 8, 3)"));

  Device* d = test::test_runtime().find_device("cpu:0");
  REQUIRE(d != nullptr);
  CHECK_THROWS_WITH(model_from_keras_json(sequential("[null, 8, 6]"), "m.json").model->build({8, 6, 3}, *d, 1),
                    Contains("the model's input is [8,6] (one channel") && Contains("the images [8,6,3]"));
  k.model->build(k.input_shape, *d, 1);
  k.model->compile();
  data::HostBatch batch;
  batch.size = 2;
  batch.images.assign(2 * 48, 100);
  batch.labels = {1, 2};
  k.model->compute_gradients(batch);
  for (float v : k.model->per_sample_loss(2).to_vector<float>()) CHECK(std::isfinite(v));

  refused(sequential("[null, 8]"), {"[null, height, width, channels] or [null, height, width]"});
}

TEST_CASE("merges broadcast their inputs' shapes as Keras does", "[keras][graph]") {
  Merge m(Merge::Kind::multiply, "m");
  const Shape maps{14, 14, 16}, gate{1, 1, 16}, channels{16}, rows{1, 14, 16};
  CHECK(m.output_shape(std::vector<Shape>{gate, maps}) == maps);
  CHECK(m.output_shape(std::vector<Shape>{channels, maps}) == maps);  // [C] aligned at the last axis
  CHECK(m.output_shape(std::vector<Shape>{maps, rows, gate}) == maps);
  CHECK(m.output_shape(std::vector<Shape>{Shape{14, 1, 16}, rows}) == maps);  // both inputs repeated
  CHECK(m.output_shape(std::vector<Shape>{gate, gate}) == gate);
  CHECK(m.output_shape(std::vector<Shape>{maps, Shape{14, 16}}) == maps);
  CHECK_THROWS_WITH(m.output_shape(std::vector<Shape>{maps, Shape{7, 16}}),
                    Contains("differ in shape: [14,14,16] and [7,16]"));
  CHECK_THROWS_WITH(m.output_shape(std::vector<Shape>{gate, maps, Shape{7, 14, 16}}),
                    Contains("differ in shape: [14,14,16] and [7,14,16]"));
}

// Keras' ELU layer (alpha 1, its default) is the elu activation.
TEST_CASE("ELU reads as Activation(\"elu\") and writes back so", "[keras][graph]") {
  std::vector<L> ls{{"ELU", "e", R"("alpha": 1.0)", {"input_layer"}},
                    {"Flatten", "flatten", "", {"e"}},
                    {"Dense", "dense", R"("units": 10)", {"flatten"}}};
  const KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
  const auto* act = dynamic_cast<const ActivationLayer*>(k.model->layers()[0]);
  REQUIRE(act != nullptr);
  CHECK(act->activation() == Activation::elu);
  const std::string written = keras_json(*k.model, k.input_shape);
  CHECK_THAT(written, Contains(R"("class_name":"Activation","config":{"activation":"elu","dtype":"float32","name":"e")"));
  CHECK(keras_json(*model_from_keras_json(written, "written").model, k.input_shape) == written);
  ls[0].config = R"("alpha": 0.5)";
  refused(functional(ls, "dense"), {"layers[1]", "ELU 'e'", "alpha is 0.5; axon's elu has alpha 1"});
}

TEST_CASE("Conv2DTranspose's output_padding gives Keras' sizes and writes back", "[keras][graph]") {
  // SAME: 8 -> (8 - 1) * 2 + 3 % 2 + 1 = 16; VALID: 16 -> (16 - 1) * 2 + 3 + 0 = 33 and (16 - 1) * 3 + 2 + 2 = 49.
  const std::vector<L> ls{{"Conv2DTranspose", "t", R"("filters": 2, "kernel_size": 3, "strides": 2, "padding": "same",
                           "output_padding": 1)", {"input_layer"}},
                          {"Conv2DTranspose", "v", R"("filters": 2, "kernel_size": [3, 2], "strides": [2, 3],
                           "output_padding": [0, 2])", {"t"}},
                          {"Flatten", "flatten", "", {"v"}},
                          {"Dense", "dense", R"("units": 10)", {"flatten"}}};
  const KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
  CHECK(k.model->layers()[1]->output_shape(std::vector<Shape>{{16, 16, 2}}) == Shape{33, 49, 2});
  CHECK(k.model->layers()[0]->output_shape(std::vector<Shape>{{8, 8, 1}}) == Shape{16, 16, 2});
  const std::string written = keras_json(*k.model, k.input_shape);
  CHECK_THAT(written, Contains(R"("output_padding":[1,1])") && Contains(R"("output_padding":[0,2])"));
  CHECK(keras_json(*model_from_keras_json(written, "written").model, k.input_shape) == written);
}

// Keras 3 writes arithmetic on a functional model's tensors as operations
// of keras.src.ops among its layers, their numbers among the node's args.
namespace {
// config: more keys of the operation's config ("axis": -1); module: keras.src.ops.MODULE.
std::string op(const std::string& cls, const std::string& name, const std::string& args, const std::string& config = "",
               const std::string& module = "numpy") {
  return R"({"module": "keras.src.ops.)" + module + R"(", "class_name": ")" + cls + R"(", "config": {"name": ")" +
         name + R"(")" + (config.empty() ? "" : ", " + config) + R"(}, "registered_name": null, "name": ")" + name +
         R"(", "inbound_nodes": [{"args": [)" + args + R"(], "kwargs": {}}]})";
}
std::string nn_op(const std::string& cls, const std::string& name, const std::string& args,
                  const std::string& config = "") {
  return op(cls, name, args, config, "nn");
}
std::string with_ops(const std::vector<std::string>& ops, const std::string& last) {
  std::string s = R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "g", )"
                  R"("layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": )"
                  R"("input_layer"}, "name": "input_layer", "inbound_nodes": []})";
  for (const std::string& o : ops) s += ", " + o;
  s += R"(, {"class_name": "Flatten", "config": {"name": "flatten"}, "name": "flatten", "inbound_nodes": [{"args": [)" +
       tensor(last) + R"(], "kwargs": {}}]})";
  s += R"(, {"class_name": "Dense", "config": {"name": "dense", "units": 10}, "name": "dense", "inbound_nodes": [{"args": [)" +
       tensor("flatten") + R"(], "kwargs": {}}]})";
  return s + R"(], "input_layers": [["input_layer", 0, 0]], "output_layers": [["dense", 0, 0]]}})";
}
}  // namespace

TEST_CASE("keras.ops arithmetic reads as Rescaling of a number and as merges of two tensors", "[keras][graph]") {
  const std::string x = tensor("input_layer");
  const KerasModel k = model_from_keras_json(
      with_ops({op("Add", "add", x + ", 3.0"), op("Multiply", "mul", tensor("add") + ", " + x),
                op("Subtract", "sub", "2.0, " + tensor("mul")), op("TrueDivide", "div", tensor("sub") + ", 4.0"),
                op("Negative", "neg", tensor("div")), op("Multiply", "half", "0.5, " + tensor("neg")),
                op("Subtract", "less", tensor("half") + ", 1.5")},
               "less"),
      "ops.json");
  std::vector<std::string> types;
  for (const Layer* l : k.model->layers()) types.push_back(l->type());
  CHECK(types == std::vector<std::string>{"Rescaling", "Multiply", "Rescaling", "Rescaling", "Rescaling", "Rescaling",
                                          "Rescaling", "Flatten", "Dense"});
  CHECK(k.model->node_inputs(1) == std::vector<int>{0, kModelInput});
  const std::string written = keras_json(*k.model, k.input_shape);
  // x + 3, 2 - x, x / 4, -x, 0.5 x, x - 1.5 as scale and offset.
  for (const char* c : {R"("name":"add","offset":3.0,"scale":1.0)", R"("name":"sub","offset":2.0,"scale":-1.0)",
                        R"("name":"div","offset":0.0,"scale":0.25)", R"("name":"neg","offset":0.0,"scale":-1.0)",
                        R"("name":"half","offset":0.0,"scale":0.5)", R"("name":"less","offset":-1.5,"scale":1.0)"})
    CHECK_THAT(written, Contains(c));
  CHECK(model_from_keras_json(written, "written").weights == k.weights);

  refused(with_ops({op("TrueDivide", "div", "1.0, " + x)}, "div"),
          {"layers[1]", "TrueDivide 'div'", "is the operation TrueDivide of 1 tensors and 1 numbers", "add, subtract"});
  refused(with_ops({op("Power", "pow", x + ", 2.0")}, "pow"), {"Power 'pow'", "the operation Power"});
  refused(with_ops({op("Divide", "div", x + ", 0")}, "div"), {"Divide 'div'", "divides by 0"});
  refused(with_ops({op("Add", "add", x + R"(, "three")")}, "add"), {"Add 'add'", R"(takes "three")"});
  refused(with_ops({op("Add", "add", x + ", 1e300")}, "add"), {"Add 'add'", "not one a float holds"});
  // An operation outside a functional model's graph, or called with keywords.
  auto changed = [&](const std::string& from, const std::string& to) {
    std::string text = with_ops({op("Add", "add", x + ", 1.0")}, "add");
    text.replace(text.find(from), from.size(), to);  // the operation's node comes first
    return text;
  };
  refused(changed(R"("inbound_nodes": [{"args")", R"("nodes": [{"args")"), {"Add 'add'", "without one inbound node"});
  refused(changed(R"("kwargs": {})", R"("kwargs": {"dtype": null})"), {"Add 'add'", "keyword arguments"});
}

TEST_CASE("keras.ops activations, maximum, minimum, concatenate, reshape, mean and max read as Keras' layers",
          "[keras][graph]") {
  const std::string x = tensor("input_layer");
  std::vector<std::string> ops = {nn_op("LeakyRelu", "leaky", x, R"("negative_slope": 0.1)")};
  std::string last = "leaky";
  // Each activation of one tensor, in a chain.
  for (const char* cls : {"Relu", "Relu6", "Sigmoid", "Softplus", "Silu", "Selu", "Elu", "Gelu", "HardSigmoid",
                          "HardSilu"}) {
    const std::string name = std::string("a_") + cls;
    const std::string config = std::string(cls) == "Gelu" ? R"("approximate": false)"
                               : std::string(cls) == "Elu" ? R"("alpha": 1.0)" : "";
    ops.push_back(nn_op(cls, name, tensor(last), config));
    last = name;
  }
  ops.push_back(op("Tanh", "tanh", tensor(last)));
  ops.push_back(op("Maximum", "most", tensor("tanh") + ", " + tensor("leaky")));
  ops.push_back(op("Minimum", "least", tensor("tanh") + ", " + tensor("leaky")));
  ops.push_back(op("Concatenate", "both", "[" + tensor("most") + ", " + tensor("least") + "]", R"("axis": -1)"));
  ops.push_back(op("Mean", "mean", tensor("both"), R"("axis": [1, 2], "keepdims": true)"));
  ops.push_back(op("Max", "max", tensor("both"), R"("axis": [-3, -2], "keepdims": false, "initial": null)"));
  ops.push_back(op("Reshape", "flat", tensor("mean"), R"("newshape": [-1, 2])"));
  ops.push_back(op("Concatenate", "pooled", "[" + tensor("flat") + ", " + tensor("max") + "]", R"("axis": 1)"));
  ops.push_back(op("Reshape", "rows", tensor("pooled"), R"("newshape": [null, 2, -1])"));
  ops.push_back(nn_op("Softmax", "softmax", tensor("rows"), R"("axis": -1)"));
  const KerasModel k = model_from_keras_json(with_ops(ops, "softmax"), "ops.json");
  std::vector<std::string> types;
  for (const Layer* l : k.model->layers()) types.push_back(l->type());
  CHECK(types == std::vector<std::string>{"LeakyReLU", "Activation", "Activation", "Activation", "Activation",
                                          "Activation", "Activation", "Activation", "Activation", "Activation",
                                          "Activation", "Activation", "Maximum", "Minimum", "Concatenate",
                                          "GlobalAveragePooling2D", "GlobalMaxPooling2D", "Reshape", "Concatenate",
                                          "Reshape", "Softmax", "Flatten", "Dense"});
  CHECK(k.model->node_inputs(14) == std::vector<int>{12, 13});  // both: [most, least]
  CHECK(k.output_shape == Shape{10});
  const std::string written = keras_json(*k.model, k.input_shape);
  for (const char* c : {R"("name":"leaky","negative_slope":0.10000000149011612)", R"("activation":"hard_silu")",
                        R"("activation":"gelu")", R"("activation":"tanh")", R"("keepdims":true,"name":"mean")",
                        R"("name":"flat","target_shape":[2])", R"("name":"rows","target_shape":[2,-1])",
                        R"("axis":1,"dtype":"float32","name":"pooled")"})
    CHECK_THAT(written, Contains(c));
  CHECK(keras_json(*model_from_keras_json(written, "written").model, k.input_shape) == written);

  auto one = [&](const std::string& o) { return with_ops({o}, "o"); };
  // ops.gelu's default, the tanh approximation: no Keras activation name, so written back as the call.
  const KerasModel tanh_gelu = model_from_keras_json(one(nn_op("Gelu", "o", x, R"("approximate": true)")), "g.json");
  CHECK(std::string(tanh_gelu.model->layers()[0]->type()) == "Gelu");
  const std::string gelu_written = keras_json(*tanh_gelu.model, tanh_gelu.input_shape);
  CHECK_THAT(gelu_written, Contains(R"("class_name":"Gelu","config":{"approximate":true,"name":"o"})") &&
                               Contains(R"("module":"keras.src.ops.nn","name":"o","registered_name":"Gelu")"));
  CHECK(keras_json(*model_from_keras_json(gelu_written, "written").model, tanh_gelu.input_shape) == gelu_written);
  refused(one(nn_op("Elu", "o", x, R"("alpha": 0.5)")), {"Elu 'o'", "alpha is 0.5; axon's elu has alpha 1"});
  refused(one(nn_op("Softmax", "o", x, R"("axis": 1)")), {"Softmax 'o'", "axis is 1", "last axis"});
  refused(one(nn_op("LeakyRelu", "o", x, R"("negative_slope": -1)")), {"LeakyRelu 'o'", "negative_slope must be >= 0"});
  refused(one(op("Mean", "o", x, R"("axis": [-1], "keepdims": false)")), {"Mean 'o'", "axis is [-1]", "[1, 2]"});
  refused(one(op("Max", "o", x, R"("axis": [1, 2], "initial": 0.0)")), {"Max 'o'", "initial"});
  refused(one(op("Reshape", "o", x, R"("newshape": [64, 64])")), {"Reshape 'o'", "newshape is [64,64]", "(-1, sizes...)"});
  refused(one(op("Reshape", "o", x, R"("newshape": [-1, 0])")), {"Reshape 'o'", "a size of 0"});
  refused(one(op("Reshape", "o", x, R"("newshape": [-1, -1])")), {"Reshape 'o'", "a size of -1"});
  refused(one(op("Concatenate", "o", "[" + x + ", " + x + "]", R"("axis": 0)")), {"Concatenate 'o'", "axis is 0, the batch"});
  refused(one(op("Maximum", "o", x + ", 0.0")),
          {"Maximum 'o'", "is the operation Maximum of 1 tensors and 1 numbers", "maximum and minimum (of two tensors)"});
  refused(one(op("Concatenate", "o", "[" + x + "], 1.0")), {"Concatenate 'o'", "the operation Concatenate"});
}

// Keras' Identity, GaussianNoise and GaussianDropout (their noise: train.gradcheck).
TEST_CASE("Identity, GaussianNoise and GaussianDropout read and write as Keras'", "[keras][graph]") {
  std::vector<L> ls = {{"Identity", "same", "", {"input_layer"}},
                       {"GaussianNoise", "noise", R"("stddev": 0.1, "seed": null)", {"same"}},
                       {"GaussianDropout", "drop", R"("rate": 0.25, "seed": 3)", {"noise"}},
                       {"Flatten", "flatten", "", {"drop"}},
                       {"Dense", "dense", R"("units": 10)", {"flatten"}}};
  const KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
  CHECK(k.output_shape == Shape{10});
  const std::string written = keras_json(*k.model, k.input_shape);
  CHECK_THAT(written, Contains(R"("class_name":"Identity")") && Contains(R"("stddev":0.1)") &&
                          Contains(R"("class_name":"GaussianDropout")") && Contains(R"("rate":0.25)"));
  CHECK(keras_json(*model_from_keras_json(written, "written").model, k.input_shape) == written);
  ls[1].config = R"("stddev": -1)";
  refused(functional(ls, "dense"), {"GaussianNoise 'noise'", "stddev is -1, not a number of at least 0"});
  ls[1].config = R"("stddev": 0.1)";
  ls[2].config = R"("rate": 1)";
  refused(functional(ls, "dense"), {"GaussianDropout 'drop'", "rate is 1, not from 0 to below 1"});
}

// A training step's memory against the machine's, before any allocation.
TEST_CASE("a batch whose layer outputs exceed the memory is refused, naming the batch that fits", "[keras][graph]") {
  const KerasModel k = model_from_keras_json(functional(residual(), "dense"), "m.json");
  // Three 8x8x4 maps, a flatten of 256 and 10 logits: 1,034 floats a sample.
  CHECK(k.activations_per_sample == 3 * 256 + 256 + 10);
  const double fixed = 16.0 * static_cast<double>(k.parameters), per_sample = 4.0 * 1034;
  CHECK_NOTHROW(check_training_memory(k, 64, fixed + 64 * per_sample, "m.json"));
  CHECK_THROWS_WITH(check_training_memory(k, 64, fixed + 63.5 * per_sample, "m.json"),
                    Contains("m.json: a batch of 64 keeps about") && Contains("pass --batch-size 63 or less"));
  CHECK_THROWS_WITH(check_training_memory(k, 1, fixed, "m.json"), Contains("does not fit even for one sample"));
}

// A branched graph's weight gradients against central differences of its
// loss: the output of `a` is read by `b` and by the Add, so its gradient is
// the sum of both paths'. Linear layers only (no ReLU or pooling to switch),
// so the loss is smooth: h = 1e-2, tolerance 1e-4 + 1e-2 |analytic|.
TEST_CASE("a branched graph sums the gradients of an output read twice", "[keras][graph][gradcheck]") {
  for (const char* name : {"cpu:0", "ref:0"}) {
    Device* d = test::test_runtime().find_device(name);
    REQUIRE(d != nullptr);
    INFO(d->name());
    DeviceScope scope(*d);
    std::vector<L> ls = residual();
    ls[0].config = R"("filters": 4, "kernel_size": [3, 3], "padding": "same")";  // linear
    KerasModel k = model_from_keras_json(functional(ls, "dense"), "m.json");
    Model& m = *k.model;
    m.build(k.input_shape, *d, 3);
    m.compile();
    Rng rng(4);
    data::HostBatch batch;
    batch.size = 3;
    for (int i = 0; i < 3 * 64; ++i) batch.images.push_back(static_cast<uint8_t>(rng.below(256)));
    batch.labels = {1, 4, 7};
    // The loss itself: L = the batch's mean cross-entropy.
    auto loss = [&] {
      m.compute_gradients(batch);
      double s = 0;
      for (float v : m.per_sample_loss(3).to_vector<float>()) s += v;
      return s / 3;
    };
    m.compute_gradients(batch);
    std::vector<std::vector<float>> grads;
    for (Parameter* p : m.parameters()) grads.push_back(p->grad.to_vector<float>());
    const auto params = m.parameters();
    int checked = 0;
    for (size_t t = 0; t < params.size(); ++t) {
      std::vector<float> v = params[t]->value.to_vector<float>();
      for (size_t i = 0; i < v.size(); i += 1 + v.size() / 12) {
        const float keep = v[i];
        constexpr double h = 1e-2;
        v[i] = static_cast<float>(keep + h);
        params[t]->value.copy_from_host(v.data(), v.size() * sizeof(float));
        const double up = loss();
        v[i] = static_cast<float>(keep - h);
        params[t]->value.copy_from_host(v.data(), v.size() * sizeof(float));
        const double down = loss();
        v[i] = keep;
        params[t]->value.copy_from_host(v.data(), v.size() * sizeof(float));
        const double fd = (up - down) / (2 * h), an = grads[t][i];
        INFO(params[t]->name << "[" << i << "]: finite difference " << fd << ", backward " << an);
        CHECK(std::fabs(fd - an) <= 1e-4 + 1e-2 * std::fabs(an));
        ++checked;
      }
    }
    CHECK(checked >= 40);
  }
}
