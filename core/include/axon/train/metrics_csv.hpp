// --metrics-csv: one row per epoch, the whole file rewritten atomically after
// each epoch (temp file + rename), so it is never seen half-written and holds
// every finished epoch even if training stops early. Columns:
//   epoch,loss,accuracy,val_loss,val_accuracy,seconds,samples_per_second,input_wait_seconds
// epoch is 1-based; val_* are empty without validation data; metrics are
// printed with 9 significant digits (%.9g), times with 6 decimals.
#pragma once

#include <axon/nn/callback.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace axon::train {

std::string metrics_csv_header();
std::string metrics_csv_row(const nn::EpochLogs& logs);

class MetricsCsvLogger : public nn::Callback {
 public:
  explicit MetricsCsvLogger(std::filesystem::path file);
  // A resumed run: the rows of the epochs finished before it come first,
  // written at once (also when no epoch is left to train).
  void resume(const std::vector<nn::EpochLogs>& finished);
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  std::filesystem::path file_;
  std::string contents_;
};

}  // namespace axon::train
