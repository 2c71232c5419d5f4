// `--save m.keras`: the zip Keras' saving_lib writes (config.json,
// metadata.json, model.weights.h5, uncompressed), the weights at the paths
// keras_weight_paths gives, the optimizer's variables as Keras 3 builds them;
// and those variables read back into the optimizer.
#include <axon/error.hpp>
#include <axon/io/hdf5.hpp>
#include <axon/io/hdf5_writer.hpp>
#include <axon/io/zip_writer.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/terminate_on_nan.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
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
  return nlohmann::json{{"keras_version", "3.0.0"}, {"date_saved", date}, {"saved_by", "axon"}}.dump();
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

// Keras' order of optimizer variables, for writing and reading alike:
// iterations (0), learning_rate (1, unless scheduled), each slot group per
// trainable weight, the optimizer's scalars. Each slot value's place:
// (index under optimizer/vars, slot, weight); *total counts them all.
struct SlotPlace {
  int index;
  nn::OptimizerSlot slot;
  size_t weight;
};
std::vector<SlotPlace> slot_places(nn::Optimizer& opt, size_t weights, bool has_learning_rate, int* total) {
  std::vector<SlotPlace> out;
  int index = has_learning_rate ? 2 : 1;
  for (const std::vector<nn::OptimizerSlot>& group : opt.keras_slot_groups())
    for (size_t w = 0; w < weights; ++w)
      for (const nn::OptimizerSlot& s : group) out.push_back({index++, s, w});
  *total = index + static_cast<int>(opt.keras_scalars().size());
  return out;
}

}  // namespace

bool set_keras_optimizer_state(nn::Model& model, const KerasArchive& archive, const std::string& name) {
  const std::string h5_name = name + ": model.weights.h5";
  const io::Hdf5File h5(archive.weights_h5, h5_name);
  int stored = 0;
  for (const io::Hdf5Dataset& d : h5.datasets())
    if (d.path.starts_with("optimizer/vars/")) ++stored;
  nn::Replica& r0 = model.replica(0);
  const WeightLayout trained = WeightLayout::of(r0, true);
  int want = 0;
  const std::vector<SlotPlace> places =
      slot_places(r0.optimizer(), trained.names.size(), !scheduled(archive.config_json), &want);
  if (stored == 0 || stored != want) return false;

  const io::Hdf5Dataset* it = h5.find("optimizer/vars/0");
  if (it == nullptr || it->kind == 'f' || it->elements() != 1)
    throw UsageError(h5_name + ": optimizer/vars/0 is not the optimizer's step count (one integer)");
  const int64_t iterations = h5.integer(*it);
  if (iterations < 0) throw UsageError(h5_name + ": optimizer/vars/0 counts " + std::to_string(iterations) + " steps");
  // Slot by slot into flat buffers laid out as the trainable values.
  std::map<std::string, std::vector<float>> flat;
  for (const SlotPlace& p : places) {
    const std::string path = "optimizer/vars/" + std::to_string(p.index);
    const std::string what = p.slot.name + " of " + trained.names[p.weight];
    const io::Hdf5Dataset* d = h5.find(path);
    if (d == nullptr) throw UsageError(h5_name + ": no " + path + " (" + what + ")");
    if (d->kind != 'f' || d->shape != trained.shapes[p.weight])
      throw UsageError(h5_name + ": " + path + " (" + what + ") is " + shape_string(d->shape) +
                       (d->kind != 'f' ? " of integers" : "") + ", the model's " +
                       shape_string(trained.shapes[p.weight]) + " floats");
    const std::vector<float> v = h5.floats(*d);
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        throw UsageError(h5_name + ": " + path + " (" + what + ") holds a value that is not finite at element " +
                         std::to_string(i));
    std::vector<float>& f = flat[p.slot.name];
    f.resize(static_cast<size_t>(r0.buffers().trainable_floats()), 0.0f);
    std::copy(v.begin(), v.end(), f.begin() + trained.offsets[p.weight]);
  }
  for (int r = 0; r < model.num_replicas(); ++r) {
    nn::Optimizer& opt = model.replica(r).optimizer();
    for (const nn::OptimizerSlot& s : opt.state())
      if (const auto f = flat.find(s.name); f != flat.end())
        s.value->copy_from_host(f->second.data(), f->second.size() * sizeof(float));
    opt.set_iterations(iterations);
  }
  return true;
}

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
  const bool has_learning_rate = !scheduled(config_json);
  const WeightLayout trained = WeightLayout::of(r0, true);
  int total = 0;
  const std::vector<SlotPlace> places = slot_places(opt, trained.names.size(), has_learning_rate, &total);
  auto path = [](int index) { return "optimizer/vars/" + std::to_string(index); };
  h5.add_int64(path(0), opt.iterations());
  if (has_learning_rate) {
    const float lr = opt.learning_rate();
    h5.add_floats(path(1), {}, std::span<const float>(&lr, 1));
  }
  std::map<std::string, std::vector<float>> host;
  for (const nn::OptimizerSlot& s : opt.state()) host[s.name] = s.value->to_vector<float>();
  for (const SlotPlace& p : places)
    add(h5, path(p.index), trained.shapes[p.weight], host[p.slot.name], trained.offsets[p.weight],
        "optimizer/" + p.slot.name + "/" + trained.names[p.weight]);
  int index = total - static_cast<int>(opt.keras_scalars().size());
  for (float v : opt.keras_scalars()) h5.add_floats(path(index++), {}, std::span<const float>(&v, 1));

  const std::string weights = h5.bytes(), metadata = metadata_json();
  return io::zip_stored({{"metadata.json", metadata}, {"config.json", config_json}, {"model.weights.h5", weights}});
}

}  // namespace axon::train
