#include <axon/error.hpp>
#include <axon/train/best_model.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>

namespace axon::train {
namespace {

std::string five_places(std::optional<double> v) {
  if (!v) return "None";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.5f", *v);
  return buf;
}

}  // namespace

BestModel::BestModel(const BestModelOptions& options)
    : monitor_(options.monitor, options.mode, 0), best_(options.initial_value_threshold) {}

bool BestModel::on_epoch_end(int epoch, const EpochValues& logs, const std::string& file, std::string* message) {
  const double current = monitor_.value(logs);
  const std::string head = "Epoch " + std::to_string(epoch + 1) + ": " + monitor_.name();
  if (!monitor_.improves(current, best_)) {
    if (message != nullptr) *message = head + " did not improve from " + five_places(best_);
    return false;
  }
  if (message != nullptr)
    *message = head + " improved from " + five_places(best_) + " to " + five_places(current) + ", saving model to " + file;
  best_ = current;
  return true;
}

std::string BestModel::state() const {
  nlohmann::json s{{"best", nullptr}};
  if (best_) s["best"] = *best_;
  return s.dump();
}

void BestModel::restore_state(const std::string& json_text) {
  try {
    const nlohmann::json s = nlohmann::json::parse(json_text);
    best_ = s.at("best").is_null() ? std::nullopt : std::optional<double>(s.at("best").get<double>());
  } catch (const nlohmann::json::exception&) {
    throw UsageError("the checkpoint's ModelCheckpoint state is malformed");
  }
}

void BestModelCallback::on_epoch_end(const nn::EpochLogs& logs) {
  if (!best_only_) {
    save_();
    if (verbose_) std::printf("Epoch %d: saving model to %s\n", logs.epoch, file_.c_str());
    std::fflush(stdout);
    return;
  }
  std::string message;
  const bool save = logic_.on_epoch_end(logs.epoch - 1, epoch_values(logs), file_, &message);
  if (save) save_();
  if (verbose_) std::printf("%s\n", message.c_str());
  std::fflush(stdout);
}

}  // namespace axon::train
