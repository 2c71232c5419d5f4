// What axon-train prints after training: time per epoch, samples per second,
// input wait, final metrics; device memory with --verbose; the --compare table.
#pragma once

#include <axon/data/dataset.hpp>
#include <axon/device.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/model.hpp>
#include <axon/strategy.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace axon::train_app {

struct RunResult {
  std::string device;  // "/device:CPU:0", or "2 replicas (/device:CPU:0, /device:CPU:1)"
  nn::History history;
  double seconds_per_epoch() const;   // training time, validation excluded
  double samples_per_second() const;  // training samples / training time
  double input_wait_seconds() const;
  double final_accuracy() const;      // validation accuracy of the last epoch
};

void print_run_summary(std::FILE* out, const RunResult& r);
// The data line's text: "PATH: N training and M validation images of
// 28x28x1, 10 classes" (and where the validation data came from when
// --validation-data named it).
std::string data_summary(const data::Dataset& ds);
// "0 cat, 1 dog, ..." (names made printable).
std::string class_list(const std::vector<std::string>& names);
// What a run trained on: the device, or the replicas and workers.
std::string replicas_label(const Strategy& strategy);

// With --verbose: after each epoch, where each replica's time went.
class ReplicaTimesReport : public nn::Callback {
 public:
  explicit ReplicaTimesReport(std::FILE* out) : out_(out) {}
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  std::FILE* out_;
};
void print_memory(std::FILE* out, Device& device);
// The peak of each replica's activations and gradients (its tensor pool):
// what a step of this model needs on top of its weights.
void print_activation_memory(std::FILE* out, nn::Model& model);
// "Peak resident memory: 118.9 MiB"
void print_peak_rss(std::FILE* out);
// Peak resident set size of this process in bytes (getrusage).
uint64_t peak_rss_bytes();
void print_compare_table(std::FILE* out, const std::vector<RunResult>& runs);

}  // namespace axon::train_app
