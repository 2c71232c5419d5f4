#include "keras_operations.hpp"

#include <axon/nn/layers.hpp>
#include <axon/parse.hpp>

#include <cmath>
#include <vector>

namespace axon::nn {
namespace {

bool is_tensor(const json& a) { return a.is_object() && a.value("class_name", "") == "__keras_tensor__"; }

// The node's args: its tensors and the numbers among them, in order.
struct Args {
  int tensors = 0;
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

}  // namespace

bool is_keras_operation(const json& layer) {
  if (!layer.is_object() || !layer.contains("module") || !layer["module"].is_string()) return false;
  return layer["module"].get<std::string>().starts_with("keras.src.ops.");
}

const char* keras_operations() {
  return "add, subtract, multiply (of two tensors, or a tensor and a number), divide and true_divide (a tensor by a "
         "number), negative";
}

std::unique_ptr<Layer> layer_for_operation(const KerasLayerConfig& l) {
  const std::string& op = l.class_name();
  const Args a = read_args(l);
  const bool merge = a.tensors == 2 && a.numbers.empty();
  const bool scalar = a.tensors == 1 && a.numbers.size() == 1;
  if (op == "Negative" && a.tensors == 1 && a.numbers.empty())
    return std::make_unique<Rescaling>(-1.0f, 0.0f, l.name());
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
  if ((op == "Divide" || op == "TrueDivide") && scalar && !a.number_first) {
    if (a.numbers[0] == 0) l.fail("divides by 0");
    return std::make_unique<Rescaling>(static_cast<float>(1.0 / a.numbers[0]), 0.0f, l.name());
  }
  l.fail("is the operation " + parse::printable(op) + " of " + std::to_string(a.tensors) + " tensors and " +
         std::to_string(a.numbers.size()) + " numbers; axon reads the operations " + keras_operations());
}

}  // namespace axon::nn
