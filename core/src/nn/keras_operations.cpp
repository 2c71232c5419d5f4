#include "keras_operations.hpp"

#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/parse.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

namespace axon::nn {
namespace {

bool is_tensor(const json& a) { return a.is_object() && a.value("class_name", "") == "__keras_tensor__"; }

// The node's args: its tensors and the numbers among them, in order; a
// list of tensors (concatenate's) counts as one list.
struct Args {
  int tensors = 0;
  int lists = 0;  // lists of tensors
  std::vector<double> numbers;
  bool number_first = false;
};

Args read_args(const KerasLayerConfig& l) {
  // Checked here, not only by the graph's reader: the layer is made first.
  const json& layer = l.layer();
  const json* node = nullptr;
  if (layer.contains("inbound_nodes") && layer["inbound_nodes"].is_array() && layer["inbound_nodes"].size() == 1)
    node = &layer["inbound_nodes"][0];
  if (node == nullptr || !node->is_object() || !node->contains("args") || !(*node)["args"].is_array())
    l.fail("is an operation of keras.ops without one inbound node of args (a functional model's)");
  Args a;
  for (const json& v : (*node)["args"]) {
    if (is_tensor(v)) {
      ++a.tensors;
    } else if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), is_tensor)) {
      ++a.lists;
    } else if (v.is_number()) {
      if (a.tensors == 0) a.number_first = true;
      const double x = v.get<double>();
      if (!std::isfinite(x) || std::fabs(x) > 1e30) l.fail("takes the number " + json_text(v) + ", not one a float holds");
      a.numbers.push_back(x);
    } else {
      l.fail("takes " + json_text(v) + "; axon reads operations on tensors and numbers");
    }
  }
  if (node->contains("kwargs") && !((*node)["kwargs"].is_object() && (*node)["kwargs"].empty()))
    l.fail("takes keyword arguments " + json_text((*node)["kwargs"]) + "; axon reads none");
  return a;
}

// keras.ops' activation functions of one tensor, by the operation's class.
std::optional<Activation> unary_activation(const std::string& op) {
  static const std::pair<const char*, Activation> kOps[] = {
      {"Relu", Activation::relu},       {"Relu6", Activation::relu6},
      {"Sigmoid", Activation::sigmoid}, {"Tanh", Activation::tanh},
      {"Softplus", Activation::softplus}, {"Silu", Activation::silu},
      {"Selu", Activation::selu},       {"Elu", Activation::elu},
      {"Gelu", Activation::gelu},       {"HardSigmoid", Activation::hard_sigmoid},
      {"HardSilu", Activation::hard_silu}};
  for (const auto& [name, a] : kOps)
    if (op == name) return a;
  return std::nullopt;
}

// ops.mean / ops.max over an image's height and width: axis [1, 2] (or
// [-3, -2]), Keras' GlobalAveragePooling2D and GlobalMaxPooling2D.
std::unique_ptr<Layer> global_pooling(const KerasLayerConfig& l, bool max) {
  const json& axis = l.at_or_null("axis");
  const bool spatial = axis == json::array({1, 2}) || axis == json::array({-3, -2});
  if (!spatial)
    l.fail("axis is " + json_text(axis) + "; axon reads the mean and max over an image's height and width, [1, 2]");
  if (max) l.require_null({"initial"});
  return std::make_unique<GlobalPooling2D>(max, l.boolean("keepdims", false), l.name());
}

// ops.reshape: newshape starts with the batch (-1 or None), Reshape's target_shape follows.
std::unique_ptr<Layer> reshape(const KerasLayerConfig& l) {
  const json& s = l.at_or_null("newshape");
  if (!s.is_array() || s.size() < 2 || s.size() > 7 || !(s[0].is_null() || s[0] == json(-1)))
    l.fail("newshape is " + json_text(s) + "; axon reads (-1, sizes...): the batch first, then 1 to 6 sizes");
  Shape target;
  for (size_t i = 1; i < s.size(); ++i) {
    const int64_t d = l.integer(s[i], "newshape", -1, limits::kMaxLayerOutputsPerSample);
    if (d == 0 || (d == -1 && !s[0].is_null()))
      l.fail("newshape is " + json_text(s) + ": a size of " + std::to_string(d));
    target.push_back(d);
  }
  return std::make_unique<Reshape>(std::move(target), l.name());
}

}  // namespace

bool is_keras_operation(const json& layer) {
  if (!layer.is_object() || !layer.contains("module") || !layer["module"].is_string()) return false;
  return layer["module"].get<std::string>().starts_with("keras.src.ops.");
}

const char* keras_operations() {
  return "add, subtract, multiply (of two tensors, or a tensor and a number), divide and true_divide (a tensor by a "
         "number), negative, maximum and minimum (of two tensors), concatenate, reshape, mean and max over axis [1, "
         "2], and the activations relu, relu6, sigmoid, tanh, softplus, silu, selu, elu (alpha 1), gelu "
         "(exact or approximate), hard_sigmoid, hard_silu, leaky_relu and softmax (axis -1)";
}

std::unique_ptr<Layer> layer_for_operation(const KerasLayerConfig& l) {
  const std::string& op = l.class_name();
  const Args a = read_args(l);
  const bool merge = a.tensors == 2 && a.numbers.empty() && a.lists == 0;
  const bool scalar = a.tensors == 1 && a.numbers.size() == 1 && a.lists == 0;
  const bool unary = a.tensors == 1 && a.numbers.empty() && a.lists == 0;
  if (op == "Negative" && unary) return std::make_unique<Rescaling>(-1.0f, 0.0f, l.name());
  if (op == "Add" || op == "Subtract" || op == "Multiply") {
    const Merge::Kind kind = op == "Add" ? Merge::Kind::add : op == "Subtract" ? Merge::Kind::subtract : Merge::Kind::multiply;
    if (merge) return std::make_unique<Merge>(kind, l.name());
    if (scalar) {
      const auto c = static_cast<float>(a.numbers[0]);
      if (kind == Merge::Kind::add) return std::make_unique<Rescaling>(1.0f, c, l.name());
      if (kind == Merge::Kind::multiply) return std::make_unique<Rescaling>(c, 0.0f, l.name());
      // x - c, or c - x
      return a.number_first ? std::make_unique<Rescaling>(-1.0f, c, l.name()) : std::make_unique<Rescaling>(1.0f, -c, l.name());
    }
  }
  if ((op == "Maximum" || op == "Minimum") && merge)
    return std::make_unique<Merge>(op == "Maximum" ? Merge::Kind::maximum : Merge::Kind::minimum, l.name());
  if (op == "Concatenate" && a.lists == 1 && a.tensors == 0 && a.numbers.empty()) {
    const int64_t axis = l.integer("axis", -8, 8, 0);  // keras.ops' default, 0, is the batch
    if (axis == 0) l.fail("axis is 0, the batch; axon joins along another axis");
    return std::make_unique<Concatenate>(static_cast<int>(axis), l.name());
  }
  if (unary) {
    if (op == "Reshape") return reshape(l);
    if (op == "Mean" || op == "Max") return global_pooling(l, op == "Max");
    if (op == "LeakyRelu")
      return std::make_unique<ReLU>(l.name(), std::nullopt, l.float_number("negative_slope", 0.2), 0.0f, true);
    if (op == "Softmax") {
      if (l.has("axis") && l.at("axis") != json(-1))
        l.fail("axis is " + json_text(l.at("axis")) + "; axon's softmax is over the last axis (-1)");
      return std::make_unique<ActivationLayer>(Activation::softmax, l.name(), true);
    }
    if (const std::optional<Activation> act = unary_activation(op)) {
      if (op == "Elu" && l.number("alpha", 1.0) != 1.0)
        l.fail("alpha is " + json_text(l.at("alpha")) + "; axon's elu has alpha 1");
      if (op == "Gelu" && l.boolean("approximate", true))  // ops.gelu's default: the tanh approximation
        return std::make_unique<ActivationLayer>(Activation::gelu_tanh, l.name());
      return std::make_unique<ActivationLayer>(*act, l.name());
    }
  }
  if ((op == "Divide" || op == "TrueDivide") && scalar && !a.number_first) {
    if (a.numbers[0] == 0) l.fail("divides by 0");
    return std::make_unique<Rescaling>(static_cast<float>(1.0 / a.numbers[0]), 0.0f, l.name());
  }
  l.fail("is the operation " + parse::printable(op) + " of " + std::to_string(a.tensors) + " tensors and " +
         std::to_string(a.numbers.size()) + " numbers; axon reads the operations " + keras_operations());
}

}  // namespace axon::nn
