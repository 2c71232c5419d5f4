// Step for step Keras 3's EarlyStopping.on_epoch_end: the wait grows every
// epoch and resets on an improvement (one beating the baseline, where there
// is one); stop once it reaches the patience, never after the first epoch.
#include <axon/error.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/terminate_on_nan.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>

namespace axon::train {

EarlyStopping::EarlyStopping(const EarlyStoppingOptions& options)
    : options_(options), monitor_(options.monitor, options.mode, options.min_delta) {
  if (options.patience < 0) throw UsageError("EarlyStopping: patience must be >= 0");
  if (options.start_from_epoch < 0) throw UsageError("EarlyStopping: start_from_epoch must be >= 0");
}

EarlyStopping::Decision EarlyStopping::on_epoch_end(int epoch, const EpochValues& logs) {
  Decision d;
  const double current = monitor_.value(logs);
  if (epoch < options_.start_from_epoch) return d;
  if (options_.restore_best_weights && !kept_) {
    d.keep_weights = kept_ = true;
    best_epoch_ = epoch;
  }
  ++wait_;
  if (monitor_.improves(current, best_)) {
    best_ = current;
    best_epoch_ = epoch;
    if (options_.restore_best_weights) d.keep_weights = true;
    if (!options_.baseline || monitor_.improves(current, options_.baseline)) wait_ = 0;
    return d;
  }
  if (wait_ >= options_.patience && epoch > 0) {
    stopped_epoch_ = epoch;
    d.stop = true;
  }
  return d;
}

std::string EarlyStopping::stop_message() const { return "Epoch " + std::to_string(stopped_epoch_ + 1) + ": early stopping"; }

std::string EarlyStopping::restore_message() const {
  return "Restoring model weights from the end of the best epoch: " + std::to_string(best_epoch_ + 1) + ".";
}

std::string EarlyStopping::state() const {
  nlohmann::json s{{"wait", wait_}, {"stopped_epoch", stopped_epoch_}, {"best_epoch", best_epoch_}, {"kept", kept_},
                   {"best", nullptr}};
  if (best_) s["best"] = *best_;
  return s.dump();
}

void EarlyStopping::restore_state(const std::string& json_text) {
  try {
    const nlohmann::json s = nlohmann::json::parse(json_text);
    wait_ = s.at("wait").get<int>();
    stopped_epoch_ = s.at("stopped_epoch").get<int>();
    best_epoch_ = s.at("best_epoch").get<int>();
    kept_ = s.at("kept").get<bool>();
    best_ = s.at("best").is_null() ? std::nullopt : std::optional<double>(s.at("best").get<double>());
  } catch (const nlohmann::json::exception&) {
    throw UsageError("the checkpoint's EarlyStopping state is malformed");
  }
}

void EarlyStoppingCallback::on_epoch_end(const nn::EpochLogs& logs) {
  const EarlyStopping::Decision d = logic_.on_epoch_end(logs.epoch - 1, epoch_values(logs));
  if (d.keep_weights) {
    synchronize_replicas(model_);
    const Tensor& values = model_.replica(0).buffers().values();
    kept_.resize(static_cast<size_t>(values.numel()));
    values.copy_to_host(kept_.data(), values.bytes());
  }
  stop_ = d.stop;
}

void EarlyStoppingCallback::load_state(const std::string& json_text) {
  logic_.restore_state(json_text);
  stop_ = logic_.stopped_epoch() >= 0;
}

void EarlyStoppingCallback::load_state_tensor(std::vector<float> values) {
  if (values.size() != static_cast<size_t>(model_.replica(0).buffers().values().numel()))
    throw UsageError("the checkpoint's EarlyStopping weights are not this model's");
  kept_ = std::move(values);
}

void EarlyStoppingCallback::on_train_end(const nn::History&) {
  if (verbose_ && logic_.stopped_epoch() >= 0) std::printf("%s\n", logic_.stop_message().c_str());
  if (logic_.restore_at_end() && !kept_.empty()) {
    for (int r = 0; r < model_.num_replicas(); ++r)
      model_.replica(r).buffers().values().copy_from_host(kept_.data(), kept_.size() * sizeof(float));
    if (verbose_) std::printf("%s\n", logic_.restore_message().c_str());
  }
  std::fflush(stdout);
}

}  // namespace axon::train
