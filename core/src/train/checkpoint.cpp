// Checkpoints: the model's state and the training position in a safetensors
// file, restored into every replica. Layout in axon/train/checkpoint.hpp.
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/train/weight_tensors.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace fs = std::filesystem;

namespace axon::train {
namespace {

constexpr const char* kFormat = "axon-checkpoint";
constexpr int kFormatVersion = 1;
constexpr const char* kPrefix = "ckpt-";
constexpr const char* kSuffix = ".safetensors";
// The model's JSON (at most limits::kMaxModelJsonBytes, escaped in the
// metadata) and the history (about 300 bytes per epoch) stay below this.
constexpr uint64_t kMaxHeaderBytes = uint64_t{16} << 20;
// The most state buffers an optimizer keeps (RMSprop: velocity, momentum,
// average_gradient; Adam with amsgrad: m, v, velocity_hat).
constexpr uint64_t kMaxOptimizerSlots = 3;
// Checkpoints from before these keys were written hold Adam with Keras'
// defaults and trained the default loss.
constexpr const char* kOldOptimizer = "--optimizer adam";
constexpr const char* kOldLoss = "--loss sparse_categorical_crossentropy";

// Optimizer state that is a running sum of squares: negative means damage.
bool never_negative(const std::string& slot) {
  return slot == "v" || slot == "velocity" || slot == "velocity_hat" || slot == "accumulator";
}

std::string g17(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// A sound checkpoint of another run (another seed, batch, ...): no fallback.
class RunMismatch : public UsageError {
 public:
  using UsageError::UsageError;
};

[[noreturn]] void corrupt(const fs::path& file, const std::string& why) {
  throw CorruptCheckpoint("checkpoint " + file.string() + " " + why);
}

// A metadata integer within [lo, hi].
int64_t meta_int(const io::SafetensorsFile& f, const fs::path& file, const std::string& key, int64_t lo, int64_t hi) {
  const std::string& text = f.meta(key);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    corrupt(file, "has " + key + " '" + parse::printable(text) + "', not an integer from " + std::to_string(lo) +
                      " to " + std::to_string(hi));
  return v;
}

double meta_double(const io::SafetensorsFile& f, const fs::path& file, const std::string& key) {
  const std::string& text = f.meta(key);
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    corrupt(file, "has " + key + " '" + parse::printable(text) + "', not a number");
  return v;
}

// The compiled metrics besides accuracy as Keras' compile_config lists them.
std::string compiled_metrics(nn::Replica& r) {
  nlohmann::json list = nlohmann::json::array();
  for (const nn::MetricOptions& m : r.train_metrics().compiled()) list.push_back(nlohmann::json::parse(nn::metric_keras_json(m)));
  return list.dump();
}

// [[name, value], ...]: compile's order (a JSON object's keys come back sorted).
nlohmann::json values_to_json(const nn::NamedValues& values) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, v] : values) j.push_back({name, g17(v)});
  return j;
}

nlohmann::json logs_fields(const nn::EpochLogs& l) {
  return {{"epoch", l.epoch},          {"epochs", l.epochs},
          {"steps", l.steps},          {"samples", l.samples},
          {"loss", g17(l.loss)},       {"accuracy", g17(l.accuracy)},
          {"has_validation", l.has_validation},
          {"val_loss", g17(l.val_loss)}, {"val_accuracy", g17(l.val_accuracy)},
          {"seconds", g17(l.seconds)}, {"validation_seconds", g17(l.validation_seconds)},
          {"input_wait_seconds", g17(l.input_wait_seconds)}, {"all_reduce_seconds", g17(l.all_reduce_seconds)},
          {"all_reduce_hidden_seconds", g17(l.all_reduce_hidden_seconds)},
          {"learning_rate", g17(l.learning_rate)}};
}

nlohmann::json logs_to_json(const nn::EpochLogs& l) {
  nlohmann::json j = logs_fields(l);
  if (!l.metrics.empty()) j["metrics"] = values_to_json(l.metrics);
  if (!l.val_metrics.empty()) j["val_metrics"] = values_to_json(l.val_metrics);
  return j;
}

// The finished epochs' logs, checked field by field (the file may be hostile).
std::vector<nn::EpochLogs> history_from(const std::string& text, const fs::path& file, int epochs_done) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    corrupt(file, std::string("has a history that is not JSON: ") + e.what());
  }
  if (!j.is_array() || j.size() != static_cast<size_t>(epochs_done))
    corrupt(file, "has a history that is not a list of its " + std::to_string(epochs_done) + " finished epochs");
  std::vector<nn::EpochLogs> out;
  for (const nlohmann::json& e : j) {
    auto integer = [&](const char* k) {
      if (!e.is_object() || !e.contains(k) || !e[k].is_number_integer()) corrupt(file, std::string("has a history without ") + k);
      return e[k].get<int64_t>();
    };
    auto number = [&](const char* k) {
      double v = 0;
      if (!e.is_object() || !e.contains(k) || !e[k].is_string()) corrupt(file, std::string("has a history without ") + k);
      const std::string s = e[k].get<std::string>();
      const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (ec != std::errc() || end != s.data() + s.size()) corrupt(file, std::string("has a history with a bad ") + k);
      return v;
    };
    nn::EpochLogs l;
    l.epoch = static_cast<int>(integer("epoch"));
    if (l.epoch != static_cast<int>(out.size()) + 1) corrupt(file, "has a history out of order");
    l.epochs = static_cast<int>(integer("epochs"));
    l.steps = integer("steps");
    l.samples = integer("samples");
    l.loss = number("loss");
    l.accuracy = number("accuracy");
    if (!e.contains("has_validation") || !e["has_validation"].is_boolean()) corrupt(file, "has a history without has_validation");
    l.has_validation = e["has_validation"].get<bool>();
    l.val_loss = number("val_loss");
    l.val_accuracy = number("val_accuracy");
    l.seconds = number("seconds");
    l.validation_seconds = number("validation_seconds");
    l.input_wait_seconds = number("input_wait_seconds");
    l.all_reduce_seconds = number("all_reduce_seconds");
    if (e.contains("all_reduce_hidden_seconds")) l.all_reduce_hidden_seconds = number("all_reduce_hidden_seconds");
    if (e.contains("learning_rate")) l.learning_rate = number("learning_rate");  // absent before schedules
    // The compiled metrics' values (absent without metrics).
    auto values = [&](const char* k) {
      nn::NamedValues out_values;
      if (!e.contains(k)) return out_values;
      if (!e[k].is_array()) corrupt(file, std::string("has a history whose ") + k + " is not a list");
      for (const nlohmann::json& p : e[k]) {
        if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
          corrupt(file, std::string("has a history whose ") + k + " are not [name, value] pairs");
        const std::string name = p[0].get<std::string>(), t = p[1].get<std::string>();
        double x = 0;
        const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
        if (t.empty() || ec != std::errc() || end != t.data() + t.size())
          corrupt(file, std::string("has a history with a bad ") + k + " value");
        out_values.emplace_back(name, x);
      }
      return out_values;
    };
    l.metrics = values("metrics");
    l.val_metrics = values("val_metrics");
    out.push_back(l);
  }
  return out;
}

// The flat buffer from the file's tensors; a mismatch is damage.
std::vector<float> flat_from(const io::SafetensorsFile& f, const fs::path& file, const std::string& prefix,
                             const WeightLayout& layout) {
  try {
    return weight_tensors_from(f, prefix, layout);
  } catch (const UsageError& e) {
    corrupt(file, std::string("does not fit this model: ") + e.what());
  }
}

}  // namespace

std::string serialize_checkpoint(nn::Model& model, const RunIdentity& run, const TrainingPosition& at,
                                 const std::vector<CheckpointedState*>& states) {
  synchronize_replicas(model);  // a failure of queued work, before its results are read
  nn::Replica& r0 = model.replica(0);
  nn::Optimizer& optimizer = r0.optimizer();
  io::SafetensorsWriter w;
  const WeightLayout layout = WeightLayout::of(r0), trained = WeightLayout::of(r0, true);
  add_weight_tensors(w, "", r0.buffers().values(), layout);
  for (const nn::OptimizerSlot& slot : optimizer.state())
    add_weight_tensors(w, "optimizer/" + slot.name + "/", *slot.value, trained);
  std::vector<float> sums(static_cast<size_t>(r0.train_metrics().sums_size()));
  r0.train_metrics().totals().copy_to_host(sums.data(), sums.size() * sizeof(float));
  check_finite_for_writing("metrics/train_sums", sums);
  w.add_f32("metrics/train_sums", {static_cast<int64_t>(sums.size())}, sums);
  nlohmann::json callbacks = nlohmann::json::object();
  for (const CheckpointedState* s : states) {
    callbacks[s->state_key()] = s->save_state();
    const std::vector<float> t = s->state_tensor();
    if (!t.empty()) {
      check_finite_for_writing("callbacks/" + s->state_key(), t);
      w.add_f32("callbacks/" + s->state_key(), {static_cast<int64_t>(t.size())}, t);
    }
  }

  nlohmann::json history = nlohmann::json::array();
  for (const nn::EpochLogs& l : at.history) history.push_back(logs_to_json(l));
  w.set_metadata("format", kFormat);
  w.set_metadata("format_version", std::to_string(kFormatVersion));
  w.set_metadata("epochs_done", std::to_string(at.epochs_done));
  w.set_metadata("step_in_epoch", std::to_string(at.step_in_epoch));
  w.set_metadata("global_step", std::to_string(at.global_step));
  w.set_metadata("seed", std::to_string(run.seed));
  w.set_metadata("batch_size", std::to_string(run.batch_size));
  w.set_metadata("train_samples", std::to_string(run.train_samples));
  w.set_metadata("steps_per_epoch", std::to_string(run.steps_per_epoch));
  w.set_metadata("learning_rate", g17(run.learning_rate));
  w.set_metadata("optimizer", optimizer.describe());
  w.set_metadata("loss", r0.loss().describe());
  if (!r0.train_metrics().compiled().empty()) w.set_metadata("metrics", compiled_metrics(r0));
  if (!run.class_names.empty()) w.set_metadata("class_names", run.class_names);
  w.set_metadata("metric_samples", std::to_string(r0.train_metrics().samples()));
  w.set_metadata("data_order", "each epoch a Fisher-Yates shuffle drawn from SplitMix64 seeded by (seed, epoch)");
  w.set_metadata("replicas", std::to_string(model.strategy().num_replicas_in_sync()));
  w.set_metadata("history", history.dump());
  if (!states.empty()) w.set_metadata("callbacks", callbacks.dump());
  w.set_metadata("model", nn::keras_json(model, model.input_shape()));
  return w.bytes(true);
}

TrainingPosition restore_checkpoint(nn::Model& model, const RunIdentity& run, std::string bytes,
                                    const fs::path& file, const std::vector<CheckpointedState*>& states) {
  io::SafetensorsLimits limits;
  limits.max_header_bytes = kMaxHeaderBytes;
  io::SafetensorsFile f;
  try {
    f = io::parse_safetensors(std::move(bytes), limits);
    if (!f.has_checksum()) corrupt(file, "has no checksum (axon_crc32): not an axon checkpoint");
    if (!f.checksum_ok()) corrupt(file, "fails its checksum: the file is damaged");
    if (f.meta("format") != kFormat) corrupt(file, "is not an axon checkpoint (format '" + parse::printable(f.meta("format")) + "')");
  } catch (const CorruptCheckpoint&) {
    throw;
  } catch (const UsageError& e) {
    corrupt(file, e.what());
  }
  try {
    if (meta_int(f, file, "format_version", 0, INT32_MAX) != kFormatVersion)
      corrupt(file, "has format version " + f.meta("format_version") + "; this build reads " + std::to_string(kFormatVersion));
    // The run it belongs to: another seed or batch would replay another order.
    const auto seed = static_cast<uint64_t>(meta_int(f, file, "seed", 0, INT64_MAX));
    const int64_t batch = meta_int(f, file, "batch_size", 1, INT64_MAX);
    const int64_t samples = meta_int(f, file, "train_samples", 1, INT64_MAX);
    const int64_t steps = meta_int(f, file, "steps_per_epoch", 1, INT64_MAX);
    const double lr = meta_double(f, file, "learning_rate");
    auto differs = [&](const std::string& what, const std::string& was, const std::string& now) {
      throw RunMismatch("checkpoint " + file.string() + " was written with " + what + " " + was + ", this run has " +
                       now + ": resume with the same settings, or start afresh in another --checkpoint-dir");
    };
    // Another model's checkpoint is sound, not damage (checkpoints before
    // this key was written have none and are matched by their tensors).
    if (f.metadata().count("model") != 0 && f.meta("model") != nn::keras_json(model, model.input_shape()))
      throw RunMismatch("checkpoint " + file.string() + " was written for another model (its Keras JSON is in the "
                        "metadata key 'model'): resume with the same --model, or start afresh in another --checkpoint-dir");
    if (seed != run.seed) differs("--seed", std::to_string(seed), std::to_string(run.seed));
    if (batch != run.batch_size) differs("--batch-size", std::to_string(batch), std::to_string(run.batch_size));
    if (samples != run.train_samples)
      differs("a training set of", std::to_string(samples) + " samples", std::to_string(run.train_samples));
    if (static_cast<float>(lr) != run.learning_rate) differs("--learning-rate", g17(lr), g17(run.learning_rate));
    const std::string classes = f.metadata().count("class_names") != 0 ? f.meta("class_names") : std::string();
    if (classes != run.class_names)
      differs("the classes", classes.empty() ? "numbered 0 to N-1" : parse::printable(classes),
              run.class_names.empty() ? "numbered labels" : parse::printable(run.class_names));
    if (steps != run.steps_per_epoch) corrupt(file, "says " + std::to_string(steps) + " steps per epoch for this batch and set");
    nn::Optimizer& optimizer = model.replica(0).optimizer();
    const std::string written_with = f.metadata().count("optimizer") != 0 ? f.meta("optimizer") : kOldOptimizer;
    if (written_with != optimizer.describe())
      differs("the optimizer", "'" + parse::printable(written_with) + "'", "'" + optimizer.describe() + "'");
    const std::string loss = model.replica(0).loss().describe();
    const std::string loss_written = f.metadata().count("loss") != 0 ? f.meta("loss") : kOldLoss;
    if (loss_written != loss) differs("the loss", "'" + parse::printable(loss_written) + "'", "'" + loss + "'");
    const std::string metrics = compiled_metrics(model.replica(0));
    const std::string metrics_written = f.metadata().count("metrics") != 0 ? f.meta("metrics") : "[]";
    if (metrics_written != metrics) differs("the metrics", parse::printable(metrics_written), metrics);

    TrainingPosition at;
    at.epochs_done = static_cast<int>(meta_int(f, file, "epochs_done", 0, INT32_MAX - 1));
    at.step_in_epoch = meta_int(f, file, "step_in_epoch", 0, steps - 1);
    at.global_step = meta_int(f, file, "global_step", 0, INT64_MAX);
    int64_t expected_step = 0;
    if (__builtin_mul_overflow(int64_t{at.epochs_done}, steps, &expected_step) ||
        __builtin_add_overflow(expected_step, at.step_in_epoch, &expected_step) || at.global_step != expected_step)
      corrupt(file, "has global_step " + std::to_string(at.global_step) + ", not epochs_done x steps_per_epoch + step_in_epoch");
    const int64_t metric_samples = meta_int(f, file, "metric_samples", 0, samples);
    at.history = history_from(f.meta("history"), file, at.epochs_done);

    // Everything is read and checked before any replica changes.
    nn::Replica& r0 = model.replica(0);
    const WeightLayout layout = WeightLayout::of(r0), trained = WeightLayout::of(r0, true);
    const std::vector<float> values = flat_from(f, file, "", layout);
    const std::vector<nn::OptimizerSlot> slots = optimizer.state();
    std::vector<std::vector<float>> state;
    for (const nn::OptimizerSlot& slot : slots) {
      state.push_back(flat_from(f, file, "optimizer/" + slot.name + "/", trained));
      if (never_negative(slot.name))
        for (float x : state.back())
          if (x < 0) corrupt(file, "holds a negative value in optimizer/" + slot.name + ", a sum of squares");
    }
    std::vector<float> sums;
    try {
      sums = f.f32("metrics/train_sums", {model.replica(0).train_metrics().sums_size()});
    } catch (const UsageError& e) {
      corrupt(file, e.what());
    }
    // The callbacks' states, checked now, loaded with the rest.
    nlohmann::json callbacks = nlohmann::json::object();
    if (f.metadata().count("callbacks") != 0) {
      callbacks = nlohmann::json::parse(f.meta("callbacks"), nullptr, false);
      if (!callbacks.is_object()) corrupt(file, "has callback states that are not a JSON object");
    }
    size_t callback_tensors = 0;
    std::vector<std::pair<CheckpointedState*, std::vector<float>>> tensors;
    for (const io::SafetensorsEntry& e : f.tensors())
      if (e.name.starts_with("callbacks/")) ++callback_tensors;
    for (CheckpointedState* s : states)
      for (const io::SafetensorsEntry& e : f.tensors())
        if (e.name == "callbacks/" + s->state_key()) tensors.emplace_back(s, f.f32(e.name, e.shape));
    const size_t expected = layout.names.size() + slots.size() * trained.names.size() + 1 + callback_tensors;
    if (f.tensors().size() != expected)
      corrupt(file, "holds " + std::to_string(f.tensors().size()) + " tensors, this model's checkpoint " +
                        std::to_string(expected));

    for (int i = 0; i < model.num_replicas(); ++i) {
      nn::Replica& r = model.replica(i);
      r.buffers().values().copy_from_host(values.data(), values.size() * sizeof(float));
      std::vector<nn::OptimizerSlot> into = r.optimizer().state();
      for (size_t k = 0; k < into.size(); ++k)
        into[k].value->copy_from_host(state[k].data(), state[k].size() * sizeof(float));
      r.optimizer().set_iterations(at.global_step);
      r.train_metrics().reset();
      r.train_metrics().totals().copy_from_host(sums.data(), sums.size() * sizeof(float));
      r.train_metrics().set_samples(metric_samples);
    }
    for (CheckpointedState* s : states) {
      const auto it = callbacks.find(s->state_key());
      if (it == callbacks.end()) continue;
      if (!it->is_string()) corrupt(file, "has a callback state for " + s->state_key() + " that is not text");
      s->load_state(it->get<std::string>());
    }
    for (auto& [s, t] : tensors) s->load_state_tensor(std::move(t));
    return at;
  } catch (const CorruptCheckpoint&) {
    throw;
  } catch (const RunMismatch&) {
    throw;
  } catch (const UsageError& e) {
    corrupt(file, e.what());  // a missing metadata key and the like: damage
  }
}

void prepare_checkpoint_dir(const fs::path& dir) {
  prepare_output_dir(dir, "--checkpoint-dir", std::string(kPrefix) + "0" + kSuffix);
}

std::vector<fs::path> CheckpointDir::list() const {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    const std::string pre = kPrefix, suf = kSuffix;
    if (name.size() <= pre.size() + suf.size() || name.compare(0, pre.size(), pre) != 0 ||
        name.compare(name.size() - suf.size(), suf.size(), suf) != 0)
      continue;
    const std::string digits = name.substr(pre.size(), name.size() - pre.size() - suf.size());
    int64_t step = 0;
    const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
    if (err != std::errc() || end != digits.data() + digits.size() || step < 0) continue;
    found.emplace_back(step, e.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& [step, path] : found) out.push_back(std::move(path));
  return out;
}

fs::path CheckpointDir::file_for(int64_t global_step) const {
  char name[48];
  std::snprintf(name, sizeof name, "%s%010lld%s", kPrefix, static_cast<long long>(global_step), kSuffix);
  return dir_ / name;
}

fs::path CheckpointDir::write(const std::string& bytes, int64_t global_step, int keep) const {
  const fs::path file = file_for(global_step);
  write_file_atomically(file, bytes);
  const std::vector<fs::path> all = list();
  for (size_t i = static_cast<size_t>(std::max(keep, 1)); i < all.size(); ++i) {
    std::error_code ec;
    fs::remove(all[i], ec);
  }
  return file;
}

uint64_t CheckpointDir::max_file_bytes(nn::Model& model) {
  // The weights, the optimizer's state buffers, EarlyStopping's kept weights
  // and the metric sums, plus the header.
  return 8 + kMaxHeaderBytes + (2 + kMaxOptimizerSlots) * static_cast<uint64_t>(model.parameter_count()) * 4 + 8;
}

CheckpointCallback::CheckpointCallback(nn::Model& model, const RunIdentity& run, CheckpointDir dir, int64_t every,
                                       int keep, TrainingPosition resumed_from, std::vector<CheckpointedState*> states)
    : model_(model), run_(run), dir_(std::move(dir)), every_(every), keep_(keep),
      history_(std::move(resumed_from.history)), states_(std::move(states)),
      last_step_written_(resumed_from.global_step > 0 ? resumed_from.global_step : -1) {}

void CheckpointCallback::on_epoch_begin(int epoch, int epochs, int64_t steps) {
  epoch_ = epoch;
  epochs_ = epochs;
  steps_ = steps;
}

void CheckpointCallback::on_batch_end(int64_t step, const std::function<nn::MetricValues()>&) {
  // The epoch's last step is saved by on_epoch_end, with its validation.
  if (every_ <= 0 || step + 1 >= steps_) return;
  const int64_t global = model_.optimizer().iterations();
  if (global % every_ != 0) return;
  write({epoch_ - 1, step + 1, global, history_});
}

void CheckpointCallback::on_epoch_end(const nn::EpochLogs& logs) {
  history_.push_back(logs);
  history_.back().replicas.clear();
  write({logs.epoch, 0, model_.optimizer().iterations(), history_});
}

fs::path CheckpointCallback::write_stopped(int epoch, int64_t steps_done) {
  const int64_t global = model_.optimizer().iterations();
  // At an epoch's start the epoch-end checkpoint (or the one resumed from) holds it.
  if (global == last_step_written_) return dir_.file_for(global);
  return write({epoch - 1, steps_done, global, history_});
}

fs::path CheckpointCallback::write(const TrainingPosition& at) {
  std::string bytes;
  try {
    bytes = serialize_checkpoint(model_, run_, at, states_);
  } catch (const NonFiniteWeights& e) {
    // A NaN can reach the weights through the gradients while the loss
    // stays finite (a max-pool passes over it): stop here, where it shows.
    const int epoch = at.step_in_epoch == 0 ? at.epochs_done : at.epochs_done + 1;
    throw TrainingDiverged("weights are not finite at " +
                               training_position(epoch, epochs_, at.step_in_epoch, steps_, at.global_step) + " (" +
                               e.detail + "), so no checkpoint of it was written",
                           at.global_step);
  }
  last_file_ = dir_.write(bytes, at.global_step, keep_);
  last_step_written_ = at.global_step;
  return last_file_;
}

}  // namespace axon::train
