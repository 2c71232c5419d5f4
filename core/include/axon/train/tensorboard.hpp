// TensorBoard's event files, written so TensorBoard shows a run while it
// trains (each event is written through at once). The format, as
// TensorFlow's record writer and tensorboard's event_file_loader define it:
//
//   a file  events.out.tfevents.<unix seconds>.<host>.<pid>  of records;
//   a record  uint64 length, uint32 masked CRC-32C of those 8 bytes,
//             `length` bytes of data, uint32 masked CRC-32C of the data
//             (little-endian; masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8);
//   the data  a tensorflow.Event protocol buffer:
//             1: wall_time (double), 2: step (int64),
//             3: file_version (string, "brain.Event:2", the first event),
//             5: summary { 1: value { 1: tag (string), 2: simple_value (float) } }.
//
// These few fields are encoded by hand (proto3 wire format: a key byte
// (field << 3 | wire type), varints, little-endian fixed32/64, length
// prefixes); tests read every scalar back with TensorBoard's own reader.
#pragma once

#include <axon/nn/callback.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace axon::train {

// CRC-32C (Castagnoli), the checksum of TFRecord files.
uint32_t crc32c(std::string_view bytes);

// One event file in `dir` (made when missing, its parent must exist).
class EventFileWriter {
 public:
  explicit EventFileWriter(const std::filesystem::path& dir);
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;
  void add_scalar(const std::string& tag, float value, int64_t step);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_event(const std::string& event);
  std::filesystem::path path_;
  int fd_ = -1;
};

// Scalars per epoch (step = the epoch, from 1): epoch/loss, epoch/accuracy,
// epoch/val_loss, epoch/val_accuracy, epoch/samples_per_second; and every
// `every` steps (0: never; step = the global step): batch/loss and
// batch/accuracy (the epoch's running means, as the progress bar shows
// them) and batch/samples_per_second (over those steps).
class TensorBoardCallback : public nn::Callback {
 public:
  TensorBoardCallback(const std::filesystem::path& dir, int64_t every, int64_t batch_size);
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  EventFileWriter writer_;
  int64_t every_, batch_size_;
  int epoch_ = 0;
  int64_t steps_ = 0;
  int64_t last_step_ = -1;  // global step of the last batch scalars (or before this epoch's first)
  std::chrono::steady_clock::time_point last_time_;
};

}  // namespace axon::train
