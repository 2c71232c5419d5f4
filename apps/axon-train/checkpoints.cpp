#include "checkpoints.hpp"

#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/log.hpp>
#include <axon/parse.hpp>
#include <axon/train/terminate_on_nan.hpp>

#include <cstdio>

namespace axon::train_app {

std::string position(const train::TrainingPosition& at, int epochs, int64_t steps) {
  if (at.step_in_epoch == 0)
    return "the end of epoch " + std::to_string(at.epochs_done) + "/" + std::to_string(epochs) + " (global step " +
           std::to_string(at.global_step) + ")";
  return "epoch " + std::to_string(at.epochs_done + 1) + "/" + std::to_string(epochs) + ", step " +
         std::to_string(at.step_in_epoch) + "/" + std::to_string(steps) + " (global step " +
         std::to_string(at.global_step) + ")";
}

namespace {

// --resume: the chief restores the newest checkpoint that reads back whole
// (saying which damaged ones it passed over) and hands its bytes to the
// other workers, which restore the same. No checkpoint at all: a fresh start.
train::TrainingPosition resume(nn::Model& model, const train::RunIdentity& run, const train::CheckpointDir& dir,
                               Strategy& strategy, const Options& opts,
                               const std::vector<train::CheckpointedState*>& states) {
  std::string bytes;
  train::TrainingPosition at;
  if (strategy.is_chief()) {
    const std::vector<std::filesystem::path> files = dir.list();
    std::vector<std::string> problems;
    std::vector<std::filesystem::path> damaged;
    for (const std::filesystem::path& file : files) {
      // Unreadable (a folder, oversized, ...) or damaged: the next older one.
      // A sound checkpoint of another run (UsageError) ends the run.
      std::string b;
      try {
        b = io::read_regular_file(file, train::CheckpointDir::max_file_bytes(model), "checkpoint");
        at = train::restore_checkpoint(model, run, b, file, states);
      } catch (const train::CorruptCheckpoint& e) {
        problems.push_back(e.what());
        damaged.push_back(file);
        continue;
      } catch (const UsageError& e) {
        if (!b.empty()) throw;
        problems.push_back(e.what());
        damaged.push_back(file);
        continue;
      }
      bytes = std::move(b);
      // The damaged ones (all newer) are kept for a look, out of the way of
      // the checkpoints this run will write under the same names.
      for (size_t i = 0; i < problems.size(); ++i) {
        const std::filesystem::path aside = damaged[i].string() + ".damaged";
        std::error_code ec;
        std::filesystem::rename(damaged[i], aside, ec);
        log::warning("checkpoint", problems[i] + "; used an older checkpoint" +
                                       (ec ? std::string() : " (the damaged one is now " + aside.string() + ")"));
      }
      if (!opts.quiet)
        std::printf("Resuming from %s: %s\n", parse::printable_path(file).c_str(),
                    position(at, opts.epochs, run.steps_per_epoch).c_str());
      break;
    }
    if (bytes.empty() && !problems.empty())
      throw UsageError("no usable checkpoint in " + dir.path().string() + ": " + problems.front() +
                       (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " older ones unusable)"
                                            : std::string()));
    if (files.empty() && !opts.quiet)
      std::printf("No checkpoint in %s yet: training from the start\n", parse::printable_path(dir.path()).c_str());
  }
  strategy.broadcast_bytes(bytes, "the checkpoint resumed from");
  if (!strategy.is_chief() && !bytes.empty()) at = train::restore_checkpoint(model, run, bytes, dir.path(), states);
  std::fflush(stdout);
  return at;
}

}  // namespace

RunCheckpoints::RunCheckpoints(nn::Model& model, const train::RunIdentity& run, const std::filesystem::path& dir,
                               Strategy& strategy, const Options& opts, bool write_files)
    : model_(model), run_(run), dir_(dir), strategy_(strategy), opts_(opts), write_files_(write_files) {}

train::TrainingPosition RunCheckpoints::restore(const std::vector<train::CheckpointedState*>& states) {
  const train::TrainingPosition at = opts_.resume ? resume(model_, run_, dir_, strategy_, opts_, states)
                                                  : train::TrainingPosition{};
  if (write_files_)
    writer_ = std::make_unique<train::CheckpointCallback>(model_, run_, dir_, opts_.checkpoint_every,
                                                          opts_.keep_checkpoints, at, states);
  return at;
}

void RunCheckpoints::on_epoch_begin(int epoch, int epochs, int64_t steps) {
  if (writer_) writer_->on_epoch_begin(epoch, epochs, steps);
}

void RunCheckpoints::on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) {
  if (writer_) writer_->on_batch_end(step, read);
}

void RunCheckpoints::on_epoch_end(const nn::EpochLogs& logs) {
  if (writer_) writer_->on_epoch_end(logs);
}

void RunCheckpoints::on_stopped(const nn::History& history) {
  // A failure of the work queued before the stop is the run's outcome, not the signal.
  train::synchronize_replicas(model_);
  if (writer_ && model_.optimizer().iterations() > 0)
    stopped_file_ = writer_->write_stopped(history.stopped_epoch, history.stopped_step);
}

}  // namespace axon::train_app
