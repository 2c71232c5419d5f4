// Keras 3's ModelCheckpoint(save_best_only=True), as a decision on an
// epoch's logs: save when the monitored value improves on the best so far
// (or on initial_value_threshold). Its state rides in checkpoints.
#pragma once

#include <axon/train/checkpoint.hpp>
#include <axon/train/monitor.hpp>

#include <functional>

#include <optional>
#include <string>

namespace axon::train {

struct BestModelOptions {
  std::string monitor = "val_loss";
  std::string mode = "auto";
  std::optional<double> initial_value_threshold;
};

class BestModel {
 public:
  explicit BestModel(const BestModelOptions& options);
  // After epoch `epoch` (0-based): whether to save, and Keras' line saying
  // why ("Epoch 3: val_loss improved from 0.41234 to 0.39876, saving model
  // to best.safetensors" / "Epoch 4: val_loss did not improve from 0.39876").
  bool on_epoch_end(int epoch, const EpochValues& logs, const std::string& file, std::string* message);

  std::string state() const;
  void restore_state(const std::string& json_text);

 private:
  Monitor monitor_;
  std::optional<double> best_;
};

// ModelCheckpoint(save_best_only) on Model::fit: after each epoch, Keras'
// line, and `save` (which writes the weights to `file`) when it improved.
class BestModelCallback : public nn::Callback, public CheckpointedState {
 public:
  // best_only false: save after every epoch (Keras' save_best_only=False).
  BestModelCallback(const BestModelOptions& options, std::string file, std::function<void()> save, bool best_only = true)
      : logic_(options), file_(std::move(file)), save_(std::move(save)), best_only_(best_only) {}
  void on_epoch_end(const nn::EpochLogs& logs) override;
  BestModel& logic() { return logic_; }
  void set_verbose(bool verbose) { verbose_ = verbose; }

  std::string state_key() const override { return "model_checkpoint"; }
  std::string save_state() const override { return logic_.state(); }
  void load_state(const std::string& json_text) override { logic_.restore_state(json_text); }

 private:
  BestModel logic_;
  std::string file_;
  std::function<void()> save_;
  bool best_only_, verbose_ = true;
};

}  // namespace axon::train
