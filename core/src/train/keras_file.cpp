#include <axon/data/zip_archive.hpp>
#include <axon/error.hpp>
#include <axon/io/hdf5.hpp>
#include <axon/limits.hpp>
#include <axon/train/keras_file.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace axon::train {
namespace {

std::vector<uint8_t> member(data::ZipArchive& zip, const std::string& member_name, uint64_t max_bytes) {
  const data::ZipArchive::Member* m = zip.find(member_name);
  if (m == nullptr) throw UsageError(zip.name() + ": no " + member_name + " inside: not a .keras file Keras wrote");
  if (m->size > max_bytes)
    throw UsageError(zip.name() + ": " + member_name + " holds " + std::to_string(m->size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " this model's file may");
  std::vector<uint8_t> bytes(static_cast<size_t>(m->size));
  auto stream = zip.open(*m);
  stream->read_exactly(bytes.data(), bytes.size(), member_name.c_str());
  stream->expect_end(member_name.c_str());
  return bytes;
}

bool upper(char c) { return c >= 'A' && c <= 'Z'; }
bool lower(char c) { return c >= 'a' && c <= 'z'; }

// keras.src.utils.naming.to_snake_case: word characters only, then Python's
// re.sub("(.)([A-Z][a-z]+)", r"\1_\2") and re.sub("([a-z])([A-Z])", r"\1_\2")
// (leftmost, non-overlapping matches), lower-cased.
std::string snake_case(const std::string& cls) {
  std::string s;
  for (const char c : cls)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') s += c;
  std::string words;
  for (size_t i = 0; i < s.size();) {
    if (i + 2 < s.size() && upper(s[i + 1]) && lower(s[i + 2])) {
      size_t end = i + 2;
      while (end < s.size() && lower(s[end])) ++end;
      words += s[i];
      words += '_';
      words += s.substr(i + 1, end - i - 1);
      i = end;
    } else {
      words += s[i++];
    }
  }
  std::string out;
  for (size_t i = 0; i < words.size();) {
    if (i + 1 < words.size() && lower(words[i]) && upper(words[i + 1])) {
      out += words[i];
      out += '_';
      out += words[i + 1];
      i += 2;
    } else {
      out += words[i++];
    }
  }
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

bool is_keras_file(const std::filesystem::path& file) { return file.extension() == ".keras"; }

KerasArchive read_keras_archive(std::span<const uint8_t> bytes, const std::string& name, uint64_t max_weights_bytes) {
  data::ZipArchive zip(bytes, name);
  std::vector<uint8_t> config = member(zip, "config.json", limits::kMaxModelJsonBytes);
  return {std::string(config.begin(), config.end()), member(zip, "model.weights.h5", max_weights_bytes)};
}

std::string read_keras_config(const std::filesystem::path& file) {
  data::ZipArchive zip(file);
  const std::vector<uint8_t> config = member(zip, "config.json", limits::kMaxModelJsonBytes);
  return std::string(config.begin(), config.end());
}

std::vector<std::pair<std::string, std::string>> keras_weight_paths(const std::string& config_json,
                                                                    const std::string& name) {
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, false);
  const nlohmann::json* layers = nullptr;
  if (config.is_object() && config.contains("config") && config["config"].is_object() &&
      config["config"].contains("layers") && config["config"]["layers"].is_array())
    layers = &config["config"]["layers"];
  if (layers == nullptr) throw UsageError(name + ": config.json holds no model with a list of layers");
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, int> used;
  for (const nlohmann::json& l : *layers) {
    if (!l.is_object() || !l.contains("class_name") || !l["class_name"].is_string() || !l.contains("config") ||
        !l["config"].is_object() || !l["config"].contains("name") || !l["config"]["name"].is_string())
      throw UsageError(name + ": config.json lists a layer without a class_name and a name");
    const std::string cls = l["class_name"].get<std::string>();
    if (cls == "InputLayer") continue;
    const std::string base = snake_case(cls);
    const auto it = used.find(base);
    const int n = it == used.end() ? (used[base] = 0) : ++it->second;
    out.emplace_back(l["config"]["name"].get<std::string>(),
                     n == 0 ? "layers/" + base : "layers/" + base + "_" + std::to_string(n));
  }
  return out;
}

std::vector<float> keras_archive_weights(const KerasArchive& archive, const WeightLayout& layout,
                                         const std::string& name) {
  const std::string h5_name = name + ": model.weights.h5";
  const io::Hdf5File h5(archive.weights_h5, h5_name);
  std::map<std::string, std::string> path_of;
  for (const auto& [layer, path] : keras_weight_paths(archive.config_json, name)) path_of[layer] = path;
  std::vector<float> flat(static_cast<size_t>(layout.floats), 0.0f);
  std::map<std::string, int> index_in_layer;
  for (size_t w = 0; w < layout.names.size(); ++w) {
    const std::string& weight = layout.names[w];
    const std::string layer = weight.substr(0, weight.rfind('/'));
    const auto p = path_of.find(layer);
    if (p == path_of.end()) throw UsageError(name + ": config.json has no layer " + layer + " (for " + weight + ")");
    const std::string path = p->second + "/vars/" + std::to_string(index_in_layer[layer]++);
    const io::Hdf5Dataset* d = h5.find(path);
    if (d == nullptr) throw UsageError(h5_name + ": no " + path + " for " + weight);
    if (d->kind != 'f') throw UsageError(h5_name + ": " + path + " (" + weight + ") does not hold floats");
    if (d->shape != layout.shapes[w])
      throw UsageError(h5_name + ": " + path + " (" + weight + ") is " + shape_string(d->shape) + ", the model's " +
                       shape_string(layout.shapes[w]));
    const std::vector<float> v = h5.floats(*d);
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        throw UsageError(h5_name + ": " + path + " (" + weight + ") holds a value that is not finite at element " +
                         std::to_string(i));
    std::copy(v.begin(), v.end(), flat.begin() + layout.offsets[w]);
  }
  // Every variable of a layer the model has must be one of its weights.
  for (const auto& [layer, path] : path_of) {
    int vars = 0;
    for (const io::Hdf5Dataset& d : h5.datasets())
      if (d.path.starts_with(path + "/vars/")) ++vars;
    const int want = index_in_layer.count(layer) ? index_in_layer[layer] : 0;
    if (vars != want)
      throw UsageError(h5_name + ": " + path + " holds " + std::to_string(vars) + " variables, the model's layer " +
                       layer + " " + std::to_string(want));
  }
  return flat;
}

}  // namespace axon::train
