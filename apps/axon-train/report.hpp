// What axon-train prints after training: time per epoch, samples per second,
// input wait, final metrics; device memory with --verbose; the --compare table.
#pragma once

#include <axon/device.hpp>
#include <axon/nn/callback.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace axon::train_app {

struct RunResult {
  std::string device;
  nn::History history;
  double seconds_per_epoch() const;   // training time, validation excluded
  double samples_per_second() const;  // training samples / training time
  double input_wait_seconds() const;
  double final_accuracy() const;      // validation accuracy of the last epoch
};

void print_run_summary(std::FILE* out, const RunResult& r);
void print_memory(std::FILE* out, Device& device);
// "Peak resident memory: 118.9 MiB"
void print_peak_rss(std::FILE* out);
// Peak resident set size of this process in bytes (getrusage).
uint64_t peak_rss_bytes();
void print_compare_table(std::FILE* out, const std::vector<RunResult>& runs);

}  // namespace axon::train_app
