#include <axon/error.hpp>
#include <axon/train/monitor.hpp>

#include <cmath>

namespace axon::train {

Monitor::Monitor(std::string name, const std::string& mode, double min_delta)
    : name_(std::move(name)), min_delta_(std::fabs(min_delta)) {
  if (mode == "min" || mode == "max") {
    maximize_ = mode == "max";
    return;
  }
  if (mode != "auto") throw UsageError("mode is " + mode + "; Keras takes min, max or auto");
  std::string metric = name_;
  if (metric.starts_with("val_")) metric = metric.substr(4);
  if (metric == "loss" || metric == "mse" || metric == "mae" || metric == "MSE" || metric == "MAE" ||
      metric == "mean_squared_error" || metric == "mean_absolute_error")
    maximize_ = false;
  else if (metric == "accuracy" || metric == "acc" || metric.ends_with("top_k_categorical_accuracy"))
    maximize_ = true;
  else
    throw UsageError("cannot tell whether " + name_ + " should rise or fall: give mode=min or mode=max");
}

EpochValues epoch_values(const nn::EpochLogs& logs) {
  EpochValues v{{"loss", logs.loss}, {"accuracy", logs.accuracy}};
  for (const auto& [name, value] : logs.metrics) v[name] = value;
  if (logs.has_validation) {
    v["val_loss"] = logs.val_loss;
    v["val_accuracy"] = logs.val_accuracy;
    for (const auto& [name, value] : logs.val_metrics) v["val_" + name] = value;
  }
  return v;
}

bool Monitor::improves(double value, std::optional<double> reference) const {
  if (!reference) return true;
  // Keras subtracts a signed delta in Python and compares float32 tensors.
  const auto shifted = static_cast<float>(maximize_ ? value - min_delta_ : value + min_delta_);
  const auto ref = static_cast<float>(*reference);
  return maximize_ ? shifted > ref : shifted < ref;
}

double Monitor::value(const EpochValues& logs) const {
  const auto it = logs.find(name_);
  if (it != logs.end()) return it->second;
  std::string have;
  for (const auto& [k, v] : logs) have += (have.empty() ? "" : ", ") + k;
  throw UsageError("monitors " + name_ + ", which is not logged; the logs have " + have);
}

}  // namespace axon::train
