// The functional API: Input(), layers called on KerasTensors, and the Keras 3
// functional JSON of a graph, which keras::Model hands to the core's Keras
// reader like any model file. Shapes come from the core's layer registry
// when a layer is called (nn::keras_layer_output_shape), so a layer that
// does not fit its inputs fails there, naming it.
#include "keras_detail.hpp"

#include <axon/error.hpp>
#include <axon/nn/keras_json.hpp>

#include <map>
#include <mutex>
#include <set>

namespace axon::keras {
namespace {

using json = nlohmann::json;
using detail::Node;

// Keras' per-process layer names: "dense", "dense_1", ...
std::mutex g_names_mutex;
std::map<std::string, int> g_name_counts;

std::string next_name(const std::string& base) {
  std::lock_guard lock(g_names_mutex);
  const int n = g_name_counts[base]++;
  return n == 0 ? base : base + "_" + std::to_string(n);
}

json batch_shape(const Shape& shape) {
  json s = json::array({nullptr});
  for (int64_t d : shape) s.push_back(d);
  return s;
}

json keras_tensor(const Node& node) {
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", batch_shape(node.shape)}, {"dtype", "float32"}, {"keras_history", {node.name, 0, 0}}}}};
}

std::string shapes_text(const std::vector<KerasTensor>& xs) {
  std::string s;
  for (const KerasTensor& x : xs) s += (s.empty() ? "" : ", ") + shape_string(x.shape());
  return s;
}

KerasTensor call(const Layer& layer, const std::vector<KerasTensor>& inputs, bool list_input) {
  const std::string what = "layers::" + layer.class_name;
  if (inputs.empty()) throw UsageError(what + " called on no tensors");
  if (!layer.input_shape.empty())
    throw UsageError(what + ": input_shape is for a Sequential's first layer; a functional model starts at Input()");
  auto node = std::make_shared<Node>();
  node->class_name = layer.class_name;
  node->list_input = list_input;
  node->config = json::parse(layer.config_json, nullptr, false);
  if (!node->config.is_object()) throw UsageError(what + ": the config is not a JSON object: " + layer.config_json);
  if (!node->config.contains("name")) node->config["name"] = next_name(detail::snake_case(layer.class_name));
  if (!node->config["name"].is_string()) throw UsageError(what + ": the name is not a string");
  node->name = node->config["name"].get<std::string>();
  std::vector<Shape> shapes;
  for (const KerasTensor& x : inputs) {
    if (!x.node()) throw UsageError(what + " '" + node->name + "' called on an empty KerasTensor");
    node->inputs.push_back(x.node());
    shapes.push_back(x.shape());
  }
  const json entry = {{"class_name", node->class_name}, {"config", node->config}};
  node->shape = nn::keras_layer_output_shape(entry.dump(), shapes, "keras: calling a layer on " + shapes_text(inputs));
  return KerasTensor(std::move(node));
}

}  // namespace

KerasTensor::KerasTensor(std::shared_ptr<const detail::Node> node) : node_(std::move(node)) {}

const Shape& KerasTensor::shape() const {
  if (!node_) throw UsageError("an empty KerasTensor has no shape");
  return node_->shape;
}

const std::string& KerasTensor::name() const {
  if (!node_) throw UsageError("an empty KerasTensor has no name");
  return node_->name;
}

KerasTensor Input(const Shape& shape, const std::string& name) {
  Shape s = shape;
  if (s.size() == 2) s.push_back(1);
  if (s.size() != 3) throw UsageError("Input: the shape must be [H, W] or [H, W, C], got " + shape_string(shape));
  for (int64_t d : s)
    if (d < 1) throw UsageError("Input: the sizes must be at least 1, got " + shape_string(shape));
  auto node = std::make_shared<Node>();
  node->class_name = "InputLayer";
  node->name = name.empty() ? next_name("input_layer") : name;
  node->config = {{"name", node->name}, {"batch_shape", batch_shape(s)}, {"dtype", "float32"}, {"sparse", false}};
  node->shape = s;
  return KerasTensor(std::move(node));
}

KerasTensor Layer::operator()(const KerasTensor& input) const { return call(*this, {input}, false); }
KerasTensor Layer::operator()(const std::vector<KerasTensor>& inputs) const { return call(*this, inputs, true); }

namespace backend {
void clear_session() {
  std::lock_guard lock(g_names_mutex);
  g_name_counts.clear();
}
}  // namespace backend

namespace detail {

std::string functional_json(const KerasTensor& inputs, const KerasTensor& outputs, const std::string& name) {
  const std::string what = "keras::Model '" + name + "'";
  if (!inputs.node() || !outputs.node()) throw UsageError(what + ": an empty KerasTensor");
  if (inputs.node()->class_name != "InputLayer")
    throw UsageError(what + ": the inputs are '" + inputs.name() + "', a layer's output, not an Input()");
  if (outputs.node() == inputs.node()) throw UsageError(what + ": the outputs are the inputs; no layer between them");
  // The layers that lead to the output, each after those it reads.
  std::vector<const Node*> order;
  std::set<const Node*> seen;
  std::vector<std::pair<const Node*, const Node*>> other_inputs;  // (input, a layer reading it)
  std::vector<std::pair<const Node*, size_t>> stack = {{outputs.node().get(), 0}};
  seen.insert(outputs.node().get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      const Node* in = node->inputs[next++].get();
      if (in->class_name == "InputLayer" && in != inputs.node().get()) other_inputs.emplace_back(in, node);
      if (seen.insert(in).second) stack.emplace_back(in, 0);
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  if (!other_inputs.empty()) {
    const auto& [input, reader] = other_inputs.front();
    if (seen.count(inputs.node().get()) == 0)
      throw UsageError(what + ": the input '" + inputs.name() + "' does not reach the output '" + outputs.name() +
                       "', which is computed from the input '" + input->name + "' (read by layer '" + reader->name +
                       "')");
    throw UsageError(what + ": layer '" + reader->name + "' reads the input '" + input->name +
                     "', which is not the model's input '" + inputs.name() +
                     "' (axon trains models of one input; the graph is disconnected)");
  }
  json layers = json::array();
  for (const Node* node : order) {
    json entry = {{"class_name", node->class_name}, {"config", node->config}, {"name", node->name}};
    json args = json::array();
    for (const auto& in : node->inputs) args.push_back(keras_tensor(*in));
    entry["inbound_nodes"] = node->inputs.empty()
                                 ? json::array()
                                 : json::array({{{"args", node->list_input ? json::array({args}) : args},
                                                 {"kwargs", json::object()}}});
    layers.push_back(std::move(entry));
  }
  const json doc = {{"class_name", "Functional"},
                    {"config",
                     {{"name", name},
                      {"trainable", true},
                      {"layers", layers},
                      {"input_layers", {inputs.name(), 0, 0}},
                      {"output_layers", {outputs.name(), 0, 0}}}}};
  return doc.dump();
}

}  // namespace detail

}  // namespace axon::keras
