// Keras 3's EarlyStopping, as decisions on an epoch's logs: when to stop,
// and which epoch's weights to keep for restore_best_weights (the trainer
// holds the weights; this says when to take and give them back). Its state
// rides in checkpoints, so a resumed run stops where the uninterrupted one
// would.
#pragma once

#include <axon/nn/model.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/monitor.hpp>

#include <optional>
#include <string>
#include <vector>

namespace axon::train {

struct EarlyStoppingOptions {
  std::string monitor = "val_loss";
  double min_delta = 0;
  int patience = 0;
  std::string mode = "auto";
  std::optional<double> baseline;
  bool restore_best_weights = false;
  int start_from_epoch = 0;
};

class EarlyStopping {
 public:
  explicit EarlyStopping(const EarlyStoppingOptions& options);

  struct Decision {
    bool keep_weights = false;  // take a copy of the weights as they are now
    bool stop = false;          // stop training after this epoch
  };
  // After epoch `epoch` (0-based) with its logs.
  Decision on_epoch_end(int epoch, const EpochValues& logs);
  // At the end of training: whether to put the kept weights back.
  bool restore_at_end() const { return options_.restore_best_weights && kept_; }
  int stopped_epoch() const { return stopped_epoch_; }  // -1 while running
  int best_epoch() const { return best_epoch_; }
  // "Epoch 6: early stopping" and "Restoring model weights from the end of
  // the best epoch: 4." as Keras prints them (epochs 1-based).
  std::string stop_message() const;
  std::string restore_message() const;

  // The state for a checkpoint (JSON), and back.
  std::string state() const;
  void restore_state(const std::string& json_text);

 private:
  EarlyStoppingOptions options_;
  Monitor monitor_;
  int wait_ = 0, stopped_epoch_ = -1, best_epoch_ = 0;
  std::optional<double> best_;
  bool kept_ = false;
};

// EarlyStopping on Model::fit: keeps a host copy of the weights (every
// replica holds the same) when the logic says so, stops fit, and at the end
// prints Keras' lines and puts the kept weights back on every replica.
class EarlyStoppingCallback : public nn::Callback, public CheckpointedState {
 public:
  EarlyStoppingCallback(nn::Model& model, const EarlyStoppingOptions& options) : model_(model), logic_(options) {}
  void on_epoch_end(const nn::EpochLogs& logs) override;
  bool stop_training() const override { return stop_; }
  void on_train_end(const nn::History& history) override;
  EarlyStopping& logic() { return logic_; }
  // Whether Keras' lines are printed (axon-train -q: not).
  void set_verbose(bool verbose) { verbose_ = verbose; }

  // In checkpoints: the logic's state and the kept weights.
  std::string state_key() const override { return "early_stopping"; }
  std::string save_state() const override { return logic_.state(); }
  void load_state(const std::string& json_text) override;
  std::vector<float> state_tensor() const override { return kept_; }
  void load_state_tensor(std::vector<float> values) override;

 private:
  nn::Model& model_;
  EarlyStopping logic_;
  std::vector<float> kept_;
  bool stop_ = false, verbose_ = true;
};

}  // namespace axon::train
