// Training checkpoints (Keras' BackupAndRestore): everything needed to go on
// from a step as if training had never stopped, in one safetensors file
// (axon/io/safetensors.hpp), so NumPy and PyTorch read it too:
//
//   tensors   "conv2d/kernel", "conv2d/bias", ...          the weights (Keras names and layouts)
//             "optimizer/<slot>/conv2d/kernel"             the optimizer's state, per weight and
//                                                          slot (Keras' variable names: m and v
//                                                          for Adam and Nadam, momentum, velocity,
//                                                          average_gradient, velocity_hat, accumulator)
//             "metrics/train_sums"                         the running loss sum, correct count
//                                                          and compiled metrics' sums of the
//                                                          epoch in progress
//   metadata  format, format_version, epochs_done, step_in_epoch, global_step,
//             seed, batch_size, train_samples, steps_per_epoch, learning_rate,
//             optimizer (its axon-train flags; absent: Adam with Keras' defaults),
//             loss (its axon-train flag; absent: sparse categorical cross-entropy),
//             metrics (the compiled ones as Keras serialises them; absent: none),
//             metric_samples, data_order, replicas, history (the finished
//             epochs' logs as JSON), model (its Keras JSON), axon_crc32 (over
//             all of it)
//
// The data order needs no state of its own: each epoch's shuffle depends
// only on (seed, epoch), so a resumed run replays the epoch's order and
// skips the steps already done. Files are ckpt-<global step>.safetensors in
// the checkpoint folder, written atomically (temp file, fsync, rename, fsync
// of the folder); the newest `keep` are kept.
#pragma once

#include <axon/error.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/model.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace axon::train {

inline constexpr int kMaxKeptCheckpoints = 1000;

// The run a checkpoint belongs to: resuming needs the same values.
struct RunIdentity {
  uint64_t seed = 0;
  int64_t batch_size = 0;  // the global batch
  int64_t train_samples = 0;
  int64_t steps_per_epoch = 0;
  float learning_rate = 0;
  // An image folder's class names as a JSON array (empty for numbered
  // labels): a checkpoint of other classes does not resume.
  std::string class_names;
};

// Where training stands, besides the model's own state.
struct TrainingPosition {
  int epochs_done = 0;        // finished epochs (validated, in history)
  int64_t step_in_epoch = 0;  // steps done of epoch epochs_done + 1
  int64_t global_step = 0;    // optimizer updates so far
  std::vector<nn::EpochLogs> history;  // the finished epochs
};

// State besides the model's that a checkpoint keeps, so a resumed run goes on
// as the uninterrupted one would: the callbacks' (EarlyStopping,
// ReduceLROnPlateau, ModelCheckpoint). Kept as JSON in the metadata key
// "callbacks" ({key: state}) and, where there is one, a float tensor
// "callbacks/<key>" (EarlyStopping's kept weights).
class CheckpointedState {
 public:
  virtual ~CheckpointedState() = default;
  virtual std::string state_key() const = 0;
  virtual std::string save_state() const = 0;
  // UsageError when the text is not a state it wrote (the file is damaged).
  virtual void load_state(const std::string& json_text) = 0;
  virtual std::vector<float> state_tensor() const { return {}; }
  virtual void load_state_tensor(std::vector<float> values) { (void)values; }
};

// The checkpoint's bytes for the model's current state (read from replica 0).
std::string serialize_checkpoint(nn::Model& model, const RunIdentity& run, const TrainingPosition& at,
                                 const std::vector<CheckpointedState*>& states = {});

// Checks `bytes` (read from `file`, named in messages) against the model and
// the run, then restores weights, the optimizer's state and the epoch's running
// metrics into every replica. Throws CorruptCheckpoint when the file is
// damaged or does not fit the model (the model is left untouched), UsageError
// when it is sound but belongs to another run (another seed, batch size, ...).
// The states whose key the checkpoint holds are loaded too (others keep
// theirs: a callback added on resuming starts afresh).
TrainingPosition restore_checkpoint(nn::Model& model, const RunIdentity& run, std::string bytes,
                                    const std::filesystem::path& file,
                                    const std::vector<CheckpointedState*>& states = {});

class CorruptCheckpoint : public UsageError {
 public:
  using UsageError::UsageError;
};

// Makes the folder when it is missing (its parent must exist) and checks it
// takes new files; UsageError naming --checkpoint-dir otherwise.
void prepare_checkpoint_dir(const std::filesystem::path& dir);

// The checkpoint files of a folder.
class CheckpointDir {
 public:
  explicit CheckpointDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  const std::filesystem::path& path() const { return dir_; }
  // ckpt-<N>.safetensors, newest (highest N) first; other files are ignored.
  std::vector<std::filesystem::path> list() const;
  std::filesystem::path file_for(int64_t global_step) const;
  // Writes atomically, then removes all but the newest `keep`.
  std::filesystem::path write(const std::string& bytes, int64_t global_step, int keep) const;
  // The largest file a checkpoint of `model` can be (for reading it safely).
  static uint64_t max_file_bytes(nn::Model& model);

 private:
  std::filesystem::path dir_;
};

// Writes a checkpoint at the end of every epoch and every `every` steps
// (0: epoch ends only), and on demand (a stop). Must come after the
// callbacks whose results belong in it (those whose CheckpointedState it
// keeps; the history is kept here). Weights that are not finite are never written: TrainingDiverged
// (axon/train/terminate_on_nan.hpp) says where instead.
class CheckpointCallback : public nn::Callback {
 public:
  CheckpointCallback(nn::Model& model, const RunIdentity& run, CheckpointDir dir, int64_t every, int keep,
                     TrainingPosition resumed_from = {}, std::vector<CheckpointedState*> states = {});
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;
  // After fit stopped: writes the state at (epoch, steps done) unless that
  // step's checkpoint exists already. Returns the file that holds it.
  std::filesystem::path write_stopped(int epoch, int64_t steps_done);
  const std::filesystem::path& last_file() const { return last_file_; }

 private:
  std::filesystem::path write(const TrainingPosition& at);

  nn::Model& model_;
  RunIdentity run_;
  CheckpointDir dir_;
  int64_t every_;
  int keep_;
  std::vector<nn::EpochLogs> history_;
  std::vector<CheckpointedState*> states_;
  int epoch_ = 0, epochs_ = 0;
  int64_t steps_ = 0;
  int64_t last_step_written_ = -1;
  std::filesystem::path last_file_;
};

}  // namespace axon::train
