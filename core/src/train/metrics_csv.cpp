#include <axon/train/atomic_file.hpp>
#include <axon/train/metrics_csv.hpp>

#include <cstdio>

namespace axon::train {

std::string metrics_csv_header() {
  return "epoch,loss,accuracy,val_loss,val_accuracy,seconds,samples_per_second,input_wait_seconds,learning_rate\n";
}

std::string metrics_csv_row(const nn::EpochLogs& l) {
  char b[512];
  char val[128] = ",";
  if (l.has_validation) std::snprintf(val, sizeof val, "%.9g,%.9g", l.val_loss, l.val_accuracy);
  std::snprintf(b, sizeof b, "%d,%.9g,%.9g,%s,%.6f,%.6f,%.6f,%.9g\n", l.epoch, l.loss, l.accuracy, val, l.seconds,
                l.seconds > 0 ? static_cast<double>(l.samples) / l.seconds : 0.0, l.input_wait_seconds, l.learning_rate);
  return b;
}

MetricsCsvLogger::MetricsCsvLogger(std::filesystem::path file) : file_(std::move(file)), contents_(metrics_csv_header()) {}

void MetricsCsvLogger::resume(const std::vector<nn::EpochLogs>& finished) {
  contents_ = metrics_csv_header();
  for (const nn::EpochLogs& l : finished) contents_ += metrics_csv_row(l);
  // Written now: a run resumed at its end trains no epoch that would write them.
  if (!finished.empty()) write_file_atomically(file_, contents_);
}

void MetricsCsvLogger::on_epoch_end(const nn::EpochLogs& logs) {
  contents_ += metrics_csv_row(logs);
  write_file_atomically(file_, contents_);
}

}  // namespace axon::train
