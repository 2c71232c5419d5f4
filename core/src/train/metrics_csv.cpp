#include <axon/train/atomic_file.hpp>
#include <axon/train/metrics_csv.hpp>

#include <cstdio>

namespace axon::train {

namespace {

// ",v1,v2" (or ",," without values).
std::string values(const nn::NamedValues& metrics, bool present) {
  std::string s;
  char b[32];
  for (const auto& m : metrics) {
    s += ',';
    if (!present) continue;
    std::snprintf(b, sizeof b, "%.9g", m.second);
    s += b;
  }
  return s;
}

}  // namespace

std::string metrics_csv_header(const nn::NamedValues& metrics) {
  std::string train, val;
  for (const auto& m : metrics) train += "," + m.first, val += ",val_" + m.first;
  return "epoch,loss,accuracy" + train + ",val_loss,val_accuracy" + val +
         ",seconds,samples_per_second,input_wait_seconds,learning_rate\n";
}

std::string metrics_csv_row(const nn::EpochLogs& l) {
  char b[256];
  std::snprintf(b, sizeof b, "%d,%.9g,%.9g", l.epoch, l.loss, l.accuracy);
  std::string row = b + values(l.metrics, true);
  if (l.has_validation) std::snprintf(b, sizeof b, ",%.9g,%.9g", l.val_loss, l.val_accuracy);
  row += l.has_validation ? b : ",,";
  row += values(l.has_validation ? l.val_metrics : l.metrics, l.has_validation);
  std::snprintf(b, sizeof b, ",%.6f,%.6f,%.6f,%.9g\n", l.seconds,
                l.seconds > 0 ? static_cast<double>(l.samples) / l.seconds : 0.0, l.input_wait_seconds, l.learning_rate);
  return row + b;
}

MetricsCsvLogger::MetricsCsvLogger(std::filesystem::path file) : file_(std::move(file)) {}

void MetricsCsvLogger::resume(const std::vector<nn::EpochLogs>& finished) {
  contents_.clear();
  for (const nn::EpochLogs& l : finished) add_row(l);
  // Written now: a run resumed at its end trains no epoch that would write them.
  if (!finished.empty()) write_file_atomically(file_, contents_);
}

void MetricsCsvLogger::add_row(const nn::EpochLogs& l) {
  if (contents_.empty()) contents_ = metrics_csv_header(l.metrics);
  contents_ += metrics_csv_row(l);
}

void MetricsCsvLogger::on_epoch_end(const nn::EpochLogs& logs) {
  add_row(logs);
  write_file_atomically(file_, contents_);
}

}  // namespace axon::train
