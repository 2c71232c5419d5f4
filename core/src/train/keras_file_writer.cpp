// `--save m.keras`: the zip Keras' saving_lib writes (config.json,
// metadata.json, model.weights.h5, uncompressed), the weights at the paths
// keras_weight_paths gives, the optimizer's variables as Keras 3 builds them.
#include <axon/error.hpp>
#include <axon/io/hdf5_writer.hpp>
#include <axon/io/zip_writer.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/terminate_on_nan.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <map>

namespace axon::train {
namespace {

// Keras' metadata.json (Keras reads none of it back): the oldest Keras whose
// format the file follows, when it was saved, and by what.
std::string metadata_json() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d@%H:%M:%S", &utc);
  return nlohmann::json{{"keras_version", "3.0.0"}, {"date_saved", date}, {"saved_by", "axon"}}
      .dump();
}

// Whether the compile_config's optimizer takes its learning rate from a
// schedule (Keras then keeps no learning_rate variable).
bool scheduled(const std::string& config_json) {
  const nlohmann::json c = nlohmann::json::parse(config_json, nullptr, false);
  const nlohmann::json::json_pointer lr("/compile_config/optimizer/config/learning_rate");
  return c.is_object() && c.contains(lr) && c[lr].is_object();
}

void add(io::Hdf5Writer& h5, const std::string& path, const Shape& shape, const std::vector<float>& host,
         int64_t offset, const std::string& name) {
  const std::span<const float> values(host.data() + offset, static_cast<size_t>(numel(shape)));
  check_finite_for_writing(name, values);
  h5.add_floats(path, shape, values);
}

}  // namespace

std::string serialize_keras_file(nn::Model& model, const std::string& config_json) {
  synchronize_replicas(model);
  nn::Replica& r0 = model.replica(0);
  io::Hdf5Writer h5;
  h5.add_group("vars");  // the model's own variables: none

  // Each layer's weights in the layer's order: vars/0, vars/1, ...
  const WeightLayout layout = WeightLayout::of(r0);
  const std::vector<float> values = r0.buffers().values().to_vector<float>();
  std::map<std::string, int> count;
  std::map<std::string, std::string> path_of;
  for (const auto& [layer, path] : keras_weight_paths(config_json, "config.json")) {
    path_of[layer] = path;
    h5.add_group(path + "/vars");
  }
  for (size_t w = 0; w < layout.names.size(); ++w) {
    const std::string layer = layout.names[w].substr(0, layout.names[w].rfind('/'));
    const auto p = path_of.find(layer);
    if (p == path_of.end()) throw RuntimeError("the model's config has no layer " + layer);
    add(h5, p->second + "/vars/" + std::to_string(count[layer]++), layout.shapes[w], values, layout.offsets[w],
        layout.names[w]);
  }

  // The optimizer: iterations, learning_rate, then its slots as Keras orders them.
  nn::Optimizer& opt = r0.optimizer();
  int index = 0;
  auto next = [&] { return "optimizer/vars/" + std::to_string(index++); };
  h5.add_int64(next(), opt.iterations());
  if (!scheduled(config_json)) {
    const float lr = opt.learning_rate();
    h5.add_floats(next(), {}, std::span<const float>(&lr, 1));
  }
  const WeightLayout trained = WeightLayout::of(r0, true);
  for (const std::vector<nn::OptimizerSlot>& group : opt.keras_slot_groups()) {
    std::vector<std::vector<float>> host;
    for (const nn::OptimizerSlot& s : group) host.push_back(s.value->to_vector<float>());
    for (size_t w = 0; w < trained.names.size(); ++w)
      for (size_t s = 0; s < group.size(); ++s)
        add(h5, next(), trained.shapes[w], host[s], trained.offsets[w], "optimizer/" + group[s].name + "/" + trained.names[w]);
  }
  for (float v : opt.keras_scalars()) h5.add_floats(next(), {}, std::span<const float>(&v, 1));

  const std::string weights = h5.bytes(), metadata = metadata_json();
  return io::zip_stored({{"metadata.json", metadata}, {"config.json", config_json}, {"model.weights.h5", weights}});
}

}  // namespace axon::train
