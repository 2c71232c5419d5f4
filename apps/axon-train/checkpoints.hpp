// --checkpoint-dir, --checkpoint-every, --keep-checkpoints and --resume: the
// training state written as fit goes, and restored when fit starts. Handed to
// keras::Model::fit as a callbacks::StateRestorer (last in the list: its
// checkpoints keep what the other callbacks decided at an epoch's end).
#pragma once

#include "options.hpp"

#include <axon/api/keras.hpp>
#include <axon/strategy.hpp>
#include <axon/train/checkpoint.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace axon::train_app {

// "the end of epoch 2/5 (global step 20)" or "epoch 3/5, step 4/10 (global step 24)".
std::string position(const train::TrainingPosition& at, int epochs, int64_t steps);

class RunCheckpoints : public keras::callbacks::StateRestorer {
 public:
  // Every worker restores with --resume; the chief (`write_files`) alone writes.
  RunCheckpoints(nn::Model& model, const train::RunIdentity& run, const std::filesystem::path& dir,
                 Strategy& strategy, const Options& opts, bool write_files);
  // With --resume: the newest checkpoint that reads back whole (the damaged
  // ones passed over, said and set aside), the chief's bytes for every worker.
  train::TrainingPosition restore(const std::vector<train::CheckpointedState*>& states) override;
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;
  // Stopped by a signal: the chief writes where it stopped, unless nothing
  // was trained yet.
  void on_stopped(const nn::History& history) override;

  // The chief's writer, once restore() made it (else null).
  const train::CheckpointCallback* writer() const { return writer_.get(); }
  // What on_stopped wrote (empty: nothing).
  const std::filesystem::path& stopped_file() const { return stopped_file_; }

 private:
  nn::Model& model_;
  train::RunIdentity run_;
  train::CheckpointDir dir_;
  Strategy& strategy_;
  const Options& opts_;
  bool write_files_;
  std::unique_ptr<train::CheckpointCallback> writer_;
  std::filesystem::path stopped_file_;
};

}  // namespace axon::train_app
