// keras::callbacks::BackupAndRestore on axon's training checkpoints
// (axon/train/checkpoint.hpp): the files, checks and bit-for-bit resume of
// axon-train --checkpoint-dir --resume, driven by fit.
#include "keras_detail.hpp"

#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/log.hpp>

namespace axon::keras {
namespace detail {

BackupAndRestoreCallback::BackupAndRestoreCallback(nn::Model& model, std::filesystem::path dir, int64_t save_freq)
    : model_(model), dir_(std::move(dir)), save_freq_(save_freq) {}

train::TrainingPosition BackupAndRestoreCallback::restore(const train::RunIdentity& run,
                                                          std::vector<train::CheckpointedState*> states,
                                                          Strategy* strategy) {
  const bool chief = model_.strategy().is_chief();
  const std::string what = "BackupAndRestore(" + dir_.path().string() + ")";
  std::string bytes;
  train::TrainingPosition at;
  if (chief) {
    try {
      train::prepare_checkpoint_dir(dir_.path());
    } catch (const UsageError& e) {
      throw UsageError(what + ": " + e.what());
    }
    // The newest backup that reads back whole; a damaged one (a disk's
    // fault: backups are written atomically) is passed over, saying so.
    for (const std::filesystem::path& file : dir_.list()) {
      std::string b;
      try {
        b = io::read_regular_file(file, train::CheckpointDir::max_file_bytes(model_), "backup");
        at = train::restore_checkpoint(model_, run, b, file, states);
      } catch (const train::CorruptCheckpoint& e) {
        log::warning("BackupAndRestore", std::string(e.what()) + "; trying an older backup");
        continue;
      } catch (const UsageError& e) {
        if (b.empty()) {
          log::warning("BackupAndRestore", std::string(e.what()) + "; trying an older backup");
          continue;
        }
        throw UsageError(what + ": " + e.what());  // another run's backup: no fallback
      }
      bytes = std::move(b);
      break;
    }
  }
  if (strategy != nullptr) {
    strategy->broadcast_bytes(bytes, "the backup resumed from");
    if (!chief && !bytes.empty()) at = train::restore_checkpoint(model_, run, bytes, dir_.path(), states);
  }
  // The chief writes the backups; every worker keeps the same state.
  if (chief)
    checkpoints_ = std::make_unique<train::CheckpointCallback>(model_, run, dir_, save_freq_, /*keep=*/1, at,
                                                               std::move(states));
  return at;
}

void BackupAndRestoreCallback::finish() {
  if (!checkpoints_) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_.path(), ec);
  if (ec) log::warning("BackupAndRestore", "could not remove " + dir_.path().string() + ": " + ec.message());
}

void BackupAndRestoreCallback::on_epoch_begin(int epoch, int epochs, int64_t steps) {
  if (checkpoints_) checkpoints_->on_epoch_begin(epoch, epochs, steps);
}

void BackupAndRestoreCallback::on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) {
  if (checkpoints_) checkpoints_->on_batch_end(step, read);
}

void BackupAndRestoreCallback::on_epoch_end(const nn::EpochLogs& logs) {
  if (checkpoints_) checkpoints_->on_epoch_end(logs);
}

}  // namespace detail

namespace callbacks {

Callback BackupAndRestore(const std::filesystem::path& backup_dir, int64_t save_freq) {
  if (backup_dir.empty()) throw UsageError("BackupAndRestore: backup_dir is empty");
  if (save_freq < 0) throw UsageError("BackupAndRestore: save_freq must be 0 (epochs) or more, got " +
                                      std::to_string(save_freq));
  return {[backup_dir, save_freq](nn::Model& model, int64_t) {
    return std::make_unique<detail::BackupAndRestoreCallback>(model, backup_dir, save_freq);
  }};
}

}  // namespace callbacks
}  // namespace axon::keras
