// --metrics-csv: one row per epoch, the whole file rewritten atomically after
// each epoch (temp file + rename), so it is never seen half-written and holds
// every finished epoch even if training stops early. Columns:
//   epoch,loss,accuracy,[METRIC,...]val_loss,val_accuracy,[val_METRIC,...]seconds,samples_per_second,
//   input_wait_seconds,learning_rate
// with a column per compiled metric besides accuracy (named as Keras logs
// it: mse, top_k_categorical_accuracy, ...). epoch is 1-based; val_* are
// empty without validation data; metrics are printed with 9 significant
// digits (%.9g), times with 6 decimals.
#pragma once

#include <axon/nn/callback.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace axon::train {

// The header for logs with these compiled metrics (EpochLogs::metrics).
std::string metrics_csv_header(const nn::NamedValues& metrics = {});
std::string metrics_csv_row(const nn::EpochLogs& logs);

class MetricsCsvLogger : public nn::Callback {
 public:
  explicit MetricsCsvLogger(std::filesystem::path file);
  // A resumed run: the rows of the epochs finished before it come first,
  // written at once (also when no epoch is left to train).
  void resume(const std::vector<nn::EpochLogs>& finished);
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  void add_row(const nn::EpochLogs& l);  // the header first (the logs name the metrics)
  std::filesystem::path file_;
  std::string contents_;
};

}  // namespace axon::train
