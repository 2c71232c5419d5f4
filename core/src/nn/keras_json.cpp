// Keras model JSON in and out. The reader takes Keras' Sequential and its
// functional Model ("Functional"), in Keras 2's layout (input shape as
// "batch_input_shape" of an InputLayer or of the first layer, inbound nodes
// as [[name, node, tensor, kwargs], ...], activations and initializers as
// plain names) and Keras 3's ("batch_shape", inbound nodes as
// {"args": [keras tensors], "kwargs": {}}, dtype policies as objects). Each
// layer is made by the layer registry (layer_registry.hpp); the graph, its
// shapes and the model's size are checked before anything is allocated.
#include "keras_config.hpp"
#include "keras_operations.hpp"
#include "layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace axon::nn {
namespace {

// Deeper nesting than any model JSON has; the parser stops there.
constexpr int kMaxJsonDepth = 32;

// [null, H, W, C] -> {H, W, C}; [null, H, W] (Keras' Input((H, W)): images
// of one channel without its axis) -> {H, W}.
Shape input_shape_from(const json& v, const std::string& source, const std::string& where) {
  auto bad = [&](const std::string& why) -> UsageError {
    return UsageError(source + ": the input shape (" + where + ") is " + json_text(v) + ": " + why);
  };
  if (!v.is_array() || (v.size() != 4 && v.size() != 3) || !v[0].is_null())
    throw bad("axon needs [null, height, width, channels] or [null, height, width]");
  Shape s;
  for (size_t i = 1; i < v.size(); ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 1) throw bad("sizes must be whole numbers of at least 1");
    const int64_t limit = i < 3 ? limits::kMaxModelImageSide : 4;
    if (v[i].get<int64_t>() > limit)
      throw bad((i < 3 ? "height and width are at most " : "channels are at most ") + std::to_string(limit));
    s.push_back(v[i].get<int64_t>());
  }
  return s;
}

// The input shape an InputLayer (or Keras 2's first layer) declares.
std::optional<Shape> declared_input(const KerasLayerConfig& l, const std::string& source) {
  for (const char* key : {"batch_shape", "batch_input_shape"})
    if (l.has(key)) return input_shape_from(l.at(key), source, "layers[" + std::to_string(l.index()) + "] " + key);
  return std::nullopt;
}

void check_input_layer(const KerasLayerConfig& l) {
  if (l.boolean("sparse", false) || l.boolean("ragged", false)) l.fail("sparse and ragged inputs are not supported");
  l.check_common();
}

// The layer for one config, by the registry, with the checks every layer shares.
std::unique_ptr<Layer> make_layer(const KerasLayerConfig& l) {
  const bool operation = is_keras_operation(l.layer());
  const LayerEntry* entry = operation ? nullptr : find_layer(l.class_name());
  if (entry == nullptr && !operation)
    l.fail("axon does not support this layer; supported: InputLayer, " + supported_layers() +
           " (docs/training.md lists their settings)");
  const std::string& name = l.name();
  if (name.empty() || name.size() > 128 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos)
    l.fail("the name must be 1 to 128 letters, digits, '_', '.' or '-' (it names the layer's weights)");
  l.check_common();
  try {
    return operation ? layer_for_operation(l) : entry->from_keras(l);
  } catch (const KerasLayerError&) {
    throw;
  } catch (const UsageError& e) {
    l.fail(e.what());  // the layer's constructor refused: name the file and the layer too
  }
}

// One input of a functional layer: the name of the layer it reads.
std::string inbound_name(const KerasLayerConfig& l, const json& t) {
  const json* history = nullptr;
  if (t.is_array() && !t.empty()) history = &t;  // Keras 2: [name, node, tensor, kwargs]
  else if (t.is_object() && t.contains("config") && t["config"].is_object() && t["config"].contains("keras_history"))
    history = &t["config"]["keras_history"];  // Keras 3: a __keras_tensor__
  if (history == nullptr || !history->is_array() || history->size() < 3 || !(*history)[0].is_string())
    l.fail("an inbound node is " + json_text(t) + ", not a layer's output");
  if ((*history)[1] != json(0) || (*history)[2] != json(0))
    l.fail("reads " + json_text(*history) + ": axon reads each layer's first (only) output");
  return (*history)[0].get<std::string>();
}

// The names of the layers a functional layer reads, in argument order.
std::vector<std::string> inbound_names(const KerasLayerConfig& l) {
  const json& layer = l.layer();
  if (!layer.contains("inbound_nodes") || !layer["inbound_nodes"].is_array())
    l.fail("has no inbound_nodes list (a functional model's layer reads earlier layers)");
  const json& nodes = layer["inbound_nodes"];
  if (nodes.empty()) l.fail("has no inbound node: nothing feeds it");
  if (nodes.size() > 1) l.fail("is called " + std::to_string(nodes.size()) + " times; axon does not share a layer's weights");
  const json& node = nodes[0];
  std::vector<std::string> names;
  if (node.is_object()) {  // Keras 3: {"args": [x] or [[x, y]], "kwargs": {}}
    if (!node.contains("args") || !node["args"].is_array() || node["args"].empty())
      l.fail("its inbound node has no args");
    const json& a = node["args"][0];
    if (is_keras_operation(layer)) {  // its args: tensors and numbers
      for (const json& t : node["args"])
        if (t.is_array())  // concatenate's list of tensors
          for (const json& u : t) names.push_back(inbound_name(l, u));
        else if (!t.is_number())
          names.push_back(inbound_name(l, t));
    } else if (a.is_array())
      for (const json& t : a) names.push_back(inbound_name(l, t));
    else
      names.push_back(inbound_name(l, a));
  } else if (node.is_array()) {  // Keras 2: [[name, node, tensor, kwargs], ...]
    for (const json& t : node) names.push_back(inbound_name(l, t));
  } else {
    l.fail("its inbound node is " + json_text(node));
  }
  if (names.empty()) l.fail("its inbound node reads nothing");
  return names;
}

// input_layers / output_layers: exactly one [name, 0, 0] (Keras 3 may write
// it flat, Keras 2 as a list of one).
std::string endpoint(const json& config, const char* key, const std::string& source) {
  const auto it = config.find(key);
  if (it == config.end() || !it->is_array()) throw UsageError(source + ": the model has no " + key);
  const json* e = &*it;
  if (!e->empty() && (*e)[0].is_array()) {
    if (e->size() != 1)
      throw UsageError(source + ": the model has " + std::to_string(e->size()) + " " + key +
                       "; axon trains models of one input and one output");
    e = &(*e)[0];
  }
  if (e->size() < 1 || !(*e)[0].is_string()) throw UsageError(source + ": " + key + " is " + json_text(*it));
  return (*e)[0].get<std::string>();
}

struct Parsed {
  std::string model_name;
  Shape input_shape;
  std::vector<std::unique_ptr<Layer>> layers;  // JSON order, InputLayers left out
  std::vector<size_t> json_index;              // each layer's index in config.layers (a nested model's)
  std::vector<const json*> json_layer;         // each layer's own JSON (inside a nested model: its entry there)
  std::vector<std::vector<std::string>> reads; // functional: the names each reads
  bool functional = false;
};

// A Sequential inside a functional model (ConvNeXt's stem and downsampling
// layers): its layers join the graph in its place as a chain, the first
// reading what the Sequential reads; `alias` maps the Sequential's name to
// its last layer's, which is what its readers read.
void add_nested_sequential(Parsed& p, const KerasLayerConfig& l, const std::string& source,
                           std::set<std::string>& names, std::map<std::string, std::string>& alias) {
  const json& inner = l.at_or_null("layers");
  if (!inner.is_array()) l.fail("a nested Sequential without a layers list");
  std::vector<std::string> reads = inbound_names(l);
  std::string last;
  for (const json& lj : inner) {
    const KerasLayerConfig il(source, l.index(), lj);
    if (il.class_name() == "InputLayer") continue;
    if (il.class_name() == "Sequential" || il.class_name() == "Functional" || il.class_name() == "Model")
      il.fail("a model nested two levels deep (inside '" + parse::printable(l.name()) + "'); axon reads one");
    if (!names.insert(il.name()).second) il.fail("the name is used by an earlier layer");
    p.layers.push_back(make_layer(il));
    p.json_index.push_back(l.index());
    p.json_layer.push_back(&lj);
    p.reads.push_back(reads);
    reads = {il.name()};
    last = il.name();
  }
  if (last.empty()) l.fail("a nested Sequential with no layers");
  alias[l.name()] = last;
}

Parsed parse_layers(const json& doc, const std::string& source) {
  Parsed p;
  const std::string cls = doc["class_name"].get<std::string>();
  p.functional = cls == "Functional" || cls == "Model";
  if (!p.functional && cls != "Sequential")
    throw UsageError(source + ": the model is a " + parse::printable(cls) +
                     "; axon reads Sequential and functional models (model.to_json())");
  if (!doc.contains("config") || !doc["config"].is_object() || !doc["config"].contains("layers") ||
      !doc["config"]["layers"].is_array())
    throw UsageError(source + ": the " + parse::printable(cls) + " has no config.layers list");
  const json& config = doc["config"];
  const json& layers = config["layers"];
  if (layers.size() > static_cast<size_t>(limits::kMaxModelLayers))
    throw UsageError(source + ": " + std::to_string(layers.size()) + " layers, above the limit of " +
                     std::to_string(limits::kMaxModelLayers));
  p.model_name = p.functional ? "functional" : "sequential";
  if (config.contains("name") && config["name"].is_string()) p.model_name = parse::printable(config["name"].get<std::string>());

  std::optional<Shape> input;
  std::string input_name;
  std::set<std::string> names;
  std::map<std::string, std::string> alias;  // a nested Sequential's name -> its last layer's
  for (size_t i = 0; i < layers.size(); ++i) {
    const KerasLayerConfig l(source, i, layers[i]);
    if (!names.insert(l.name()).second && !l.name().empty()) l.fail("the name is used by an earlier layer");
    if (l.class_name() == "InputLayer") {
      if (input) l.fail("a second input; axon trains models of one input");
      input = declared_input(l, source);
      if (!input) l.fail("has no batch_shape");
      check_input_layer(l);
      input_name = l.name();
      continue;
    }
    if (const std::optional<Shape> s = declared_input(l, source)) {  // Keras 2: input_shape= on the first layer
      if (!p.layers.empty()) l.fail("declares an input shape on a layer after the first");
      if (input && *input != *s)
        l.fail("declares the input shape " + shape_string(*s) + ", the InputLayer " + shape_string(*input));
      input = s;
    }
    if (p.functional && (l.class_name() == "Functional" || l.class_name() == "Model"))
      l.fail("a nested functional model; axon reads a Sequential nested in a functional model, one level deep");
    if (p.functional && l.class_name() == "Sequential") {
      add_nested_sequential(p, l, source, names, alias);
      if (p.layers.size() > static_cast<size_t>(limits::kMaxModelLayers))
        l.fail("brings the model to " + std::to_string(p.layers.size()) + " layers, above the limit of " +
               std::to_string(limits::kMaxModelLayers));
      continue;
    }
    p.layers.push_back(make_layer(l));
    p.json_index.push_back(i);
    p.json_layer.push_back(&layers[i]);
    if (p.functional) p.reads.push_back(inbound_names(l));
  }
  for (auto& r : p.reads)
    for (std::string& name : r)
      if (const auto it = alias.find(name); it != alias.end()) name = it->second;
  // Keras 3 Sequentials without an InputLayer keep the shape in build_config.
  if (!input && doc.contains("build_config") && doc["build_config"].is_object() &&
      doc["build_config"].contains("input_shape") && !doc["build_config"]["input_shape"].is_null())
    input = input_shape_from(doc["build_config"]["input_shape"], source, "build_config.input_shape");
  if (!input)
    throw UsageError(source + ": no input shape: give the model an Input(shape=(28, 28, 1)) (or input_shape=) first");
  p.input_shape = *input;
  if (p.layers.empty()) throw UsageError(source + ": the model has no layers after its input");
  if (p.functional) {
    if (endpoint(config, "input_layers", source) != input_name)
      throw UsageError(source + ": input_layers names " + json_text(config["input_layers"]) +
                       ", not the InputLayer '" + parse::printable(input_name) + "'");
    // The output goes last (the topological sort below keeps it there).
    const std::string output = endpoint(config, "output_layers", source);
    const auto it = std::find_if(p.layers.begin(), p.layers.end(), [&](const auto& l) { return l->name() == output; });
    if (it == p.layers.end())
      throw UsageError(source + ": output_layers names '" + parse::printable(output) + "', which is no layer of the model");
  }
  return p;
}

// The nodes of a functional model in a topological order (JSON order where
// it is free), and what each reads; UsageError for names that do not exist,
// cycles, and layers that do not lead to the output.
void order_graph(Parsed& p, const json& doc, const std::string& source, Graph& g, const std::string& input_name) {
  const size_t n = p.layers.size();
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) index[p.layers[i]->name()] = i;
  const std::string output = endpoint(doc["config"], "output_layers", source);
  std::vector<std::vector<int>> reads(n);  // by JSON position; kModelInput for the input
  for (size_t i = 0; i < n; ++i) {
    const KerasLayerConfig l(source, p.json_index[i], *p.json_layer[i]);
    for (const std::string& name : p.reads[i]) {
      if (name == input_name) {
        reads[i].push_back(kModelInput);
        continue;
      }
      const auto it = index.find(name);
      if (it == index.end()) l.fail("reads '" + parse::printable(name) + "', which is no layer of the model");
      reads[i].push_back(static_cast<int>(it->second));
    }
  }
  // Kahn's algorithm, taking the earliest ready layer in JSON order.
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<size_t>> readers(n);
  for (size_t i = 0; i < n; ++i)
    for (int j : reads[i])
      if (j >= 0) ++waiting[i], readers[static_cast<size_t>(j)].push_back(i);
  std::vector<int> position(n, -1);
  std::vector<size_t> order;
  std::set<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.insert(i);
  while (!ready.empty()) {
    const size_t i = *ready.begin();
    ready.erase(ready.begin());
    position[i] = static_cast<int>(order.size());
    order.push_back(i);
    for (size_t r : readers[i])
      if (--waiting[r] == 0) ready.insert(r);
  }
  if (order.size() != n) {
    std::string cycle;
    for (size_t i = 0; i < n; ++i)
      if (position[i] < 0) cycle += (cycle.empty() ? "" : ", ") + p.layers[i]->name();
    throw UsageError(source + ": the layers " + parse::printable(cycle) + " read each other in a cycle");
  }
  // Every layer must lead to the output, which then is the last in the order.
  std::vector<char> useful(n, 0);
  useful[index.at(output)] = 1;
  for (size_t k = n; k-- > 0;) {
    const size_t i = order[k];
    if (!useful[i]) continue;
    for (int j : reads[i])
      if (j >= 0) useful[static_cast<size_t>(j)] = 1;
  }
  for (size_t i = 0; i < n; ++i)
    if (!useful[i]) {
      const KerasLayerConfig l(source, p.json_index[i], *p.json_layer[i]);
      l.fail("its output does not reach the model's output '" + parse::printable(output) + "'");
    }
  for (size_t i : order) {
    std::vector<int> ins;
    for (int j : reads[i]) ins.push_back(j == kModelInput ? kModelInput : position[static_cast<size_t>(j)]);
    g.inputs.push_back(std::move(ins));
    g.layers.push_back(std::move(p.layers[i]));
  }
  std::vector<size_t> json_index;
  std::vector<const json*> json_layer;
  for (size_t i : order) json_index.push_back(p.json_index[i]), json_layer.push_back(p.json_layer[i]);
  p.json_index = std::move(json_index);
  p.json_layer = std::move(json_layer);
}

}  // namespace

KerasModel model_from_keras_json(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw UsageError(source + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return true;
    });
  } catch (const json::exception& e) {
    throw UsageError(source + ": not valid JSON: " + parse::printable(e.what()));
  }
  if (!doc.is_object() || !doc.contains("class_name") || !doc["class_name"].is_string())
    throw UsageError(source + ": not a Keras model JSON (no class_name); write it with model.to_json()");
  Parsed p = parse_layers(doc, source);

  Graph g;
  if (p.functional) {
    std::string input_name;
    for (const json& l : doc["config"]["layers"])
      if (l.is_object() && l.value("class_name", "") == "InputLayer" && l.contains("config") &&
          l["config"].is_object() && l["config"].contains("name") && l["config"]["name"].is_string())
        input_name = l["config"]["name"].get<std::string>();
    order_graph(p, doc, source, g, input_name);
  } else {
    for (size_t i = 0; i < p.layers.size(); ++i) {
      g.inputs.push_back({static_cast<int>(i) - 1});
      g.layers.push_back(std::move(p.layers[i]));
    }
  }

  // Shapes, weights and limits, layer by layer, before any allocation.
  KerasModel out;
  out.input_shape = p.input_shape;
  if (out.input_shape.size() == 2) out.input_shape.push_back(1);  // the images: one channel
  std::vector<Shape> shapes;
  int64_t params = 0, activations = 0;
  for (size_t i = 0; i < g.layers.size(); ++i) {
    const KerasLayerConfig l(source, p.json_index[i], *p.json_layer[i]);
    Layer& layer = *g.layers[i];
    std::vector<Shape> in;
    for (int j : g.inputs[i]) in.push_back(j == kModelInput ? p.input_shape : shapes[static_cast<size_t>(j)]);
    if (const std::string why = layer.input_count_error(static_cast<int>(in.size())); !why.empty()) l.fail(why);
    Shape s;
    try {
      s = layer.output_shape(in);
    } catch (const UsageError& e) {
      l.fail(e.what());
    }
    for (const WeightSpec& w : layer.weight_specs(in)) {
      const int64_t count = numel(w.shape);
      if (count > limits::kMaxModelParameters - params)
        l.fail("brings the model above its limit of " + std::to_string(limits::kMaxModelParameters) + " parameters");
      params += count;
      out.weights.push_back({layer.name() + "/" + w.name, w.shape});
    }
    if (numel(s) > limits::kMaxLayerOutputsPerSample)
      l.fail("outputs " + shape_string(s) + " per sample, above the limit of " +
             std::to_string(limits::kMaxLayerOutputsPerSample) + " values");
    activations += numel(s);
    if (activations > limits::kMaxActivationsPerSample)
      l.fail("brings the model's activations to " + std::to_string(activations) + " values per sample, above the limit of " +
             std::to_string(limits::kMaxActivationsPerSample));
    if (i + 1 == g.layers.size() && s.size() != 1)
      l.fail("is the model's output and gives " + shape_string(s) +
             " per sample; the output must be [classes] (a Flatten or a global pooling before the last Dense)");
    shapes.push_back(std::move(s));
  }
  out.output_shape = shapes.back();
  out.activations_per_sample = activations;
  out.parameters = params;
  if (p.functional) {
    auto m = std::make_unique<Model>(p.model_name);
    for (size_t i = 0; i < g.layers.size(); ++i) m->add_node(std::move(g.layers[i]), g.inputs[i]);
    out.model = std::move(m);
  } else {
    auto m = std::make_unique<Sequential>(p.model_name);
    for (auto& l : g.layers) m->add(std::move(l));
    out.model = std::move(m);
  }
  if (p.input_shape.size() == 2) out.model->declare_input(p.input_shape);
  return out;
}

void check_training_memory(const KerasModel& k, int64_t batch, double memory_bytes, const std::string& source) {
  const double per_sample = 4.0 * static_cast<double>(k.activations_per_sample);
  const double fixed = 4.0 * 4.0 * static_cast<double>(k.parameters);
  if (per_sample * static_cast<double>(batch) + fixed <= memory_bytes) return;
  const double fits = per_sample > 0 ? std::floor((memory_bytes - fixed) / per_sample) : 0;
  char text[320];
  std::snprintf(text, sizeof text,
                "a batch of %lld keeps about %.2f GB of layer outputs for its backward (%.2f MB a sample) and the "
                "weights with their gradients and optimizer slots take %.2f GB: more than this machine's %.2f GB; ",
                static_cast<long long>(batch), per_sample * static_cast<double>(batch) / 1e9, per_sample / 1e6,
                fixed / 1e9, memory_bytes / 1e9);
  throw UsageError(source + ": " + text +
                   (fits >= 1 ? "pass --batch-size " + std::to_string(static_cast<int64_t>(fits)) + " or less"
                              : std::string("the model does not fit even for one sample")));
}

Shape keras_layer_output_shape(const std::string& layer_json, const std::vector<Shape>& inputs,
                               const std::string& source) {
  const json layer = json::parse(layer_json, nullptr, false);
  if (layer.is_discarded())
    throw UsageError(source + ": the layer is not valid JSON: " + parse::printable(layer_json, 80));
  const KerasLayerConfig l(source, KerasLayerConfig::kNoIndex, layer);
  if (l.class_name() == "InputLayer") l.fail("an input is made by Input(), not called on tensors");
  const std::unique_ptr<Layer> made = make_layer(l);
  if (const std::string why = made->input_count_error(static_cast<int>(inputs.size())); !why.empty()) l.fail(why);
  try {
    return made->output_shape(inputs);
  } catch (const KerasLayerError&) {
    throw;
  } catch (const UsageError& e) {
    l.fail(e.what());
  }
}

namespace {

// Whether the layer is written back as a keras.ops call (gelu's tanh
// approximation), not as a layer.
bool written_as_call(const Layer& l) { return std::string_view(l.keras_module()).starts_with("keras.src.ops."); }

json layer_entry(const Layer& l) {
  KerasConfigWriter w;
  json& c = w.impl().config;
  c["name"] = l.name();
  // A keras.ops call's config holds its arguments only (Keras passes them to its constructor).
  if (!written_as_call(l)) {
    c["trainable"] = true;
    c["dtype"] = "float32";
  }
  l.write_config(w);
  const bool layers = std::string_view(l.keras_module()) == "keras.layers";
  return json{{"module", l.keras_module()},
              {"class_name", l.type()},
              {"config", c},
              {"registered_name", layers ? json(nullptr) : json(l.type())}};
}

json keras_tensor(const std::string& layer, const Shape& shape) {
  json s = json::array({nullptr});
  for (int64_t d : shape) s.push_back(d);
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", s}, {"dtype", "float32"}, {"keras_history", {layer, 0, 0}}}}};
}

// Keras' name for the input, or the first "input_layer_N" no layer has.
std::string input_name(const std::vector<Layer*>& layers) {
  std::set<std::string> taken;
  for (const Layer* l : layers) taken.insert(l->name());
  std::string name = "input_layer";
  for (int n = 1; taken.count(name) != 0; ++n) name = "input_layer_" + std::to_string(n);
  return name;
}

}  // namespace

std::string keras_json(Model& model, const Shape& images) {
  const Shape input_shape = model.graph_input(images);
  json batch_shape = json::array({nullptr});
  for (int64_t d : input_shape) batch_shape.push_back(d);
  const std::vector<Layer*> ls = model.layers();
  const std::string input_layer = input_name(ls);
  json input = {{"module", "keras.layers"},
                {"class_name", "InputLayer"},
                {"config", {{"name", input_layer}, {"batch_shape", batch_shape}, {"dtype", "float32"}, {"sparse", false}}},
                {"registered_name", nullptr}};
  json layers = json::array();
  // A keras.ops call is no layer a Sequential may hold: such a chain is written as a functional model.
  const bool calls = std::any_of(ls.begin(), ls.end(), [](const Layer* l) { return written_as_call(*l); });
  if (model.is_chain() && !calls) {
    layers.push_back(input);
    for (Layer* l : ls) layers.push_back(layer_entry(*l));
    const json doc = {{"module", "keras"},
                      {"class_name", "Sequential"},
                      {"config", {{"name", model.name()}, {"trainable", true}, {"dtype", "float32"}, {"layers", layers}}},
                      {"registered_name", nullptr},
                      {"build_config", {{"input_shape", batch_shape}}}};
    return doc.dump();
  }
  std::vector<Layer*> view(ls.begin(), ls.end());
  std::vector<std::vector<int>> inputs;
  for (int i = 0; i < model.num_nodes(); ++i) inputs.push_back(model.node_inputs(i));
  const std::vector<Shape> shapes = output_shapes(view, inputs, input_shape);
  input["name"] = input_layer;
  input["inbound_nodes"] = json::array();
  layers.push_back(input);
  for (size_t i = 0; i < ls.size(); ++i) {
    json e = layer_entry(*ls[i]);
    json args = json::array();
    for (int j : inputs[i])
      args.push_back(j == kModelInput ? keras_tensor(input_layer, input_shape)
                                      : keras_tensor(ls[static_cast<size_t>(j)]->name(), shapes[static_cast<size_t>(j)]));
    e["name"] = ls[i]->name();
    e["inbound_nodes"] = json::array({{{"args", inputs[i].size() == 1 ? args : json::array({args})}, {"kwargs", json::object()}}});
    layers.push_back(std::move(e));
  }
  const json doc = {{"module", "keras.src.models.functional"},
                    {"class_name", "Functional"},
                    {"config",
                     {{"name", model.name()},
                      {"trainable", true},
                      {"layers", layers},
                      {"input_layers", {input_layer, 0, 0}},
                      {"output_layers", {ls.back()->name(), 0, 0}}}},
                    {"registered_name", "Functional"}};
  return doc.dump();
}

}  // namespace axon::nn
