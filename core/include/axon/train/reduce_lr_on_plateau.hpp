// Keras 3's ReduceLROnPlateau, as decisions on an epoch's logs: after
// `patience` epochs without improvement, the learning rate times `factor`
// (not below min_lr), then `cooldown` epochs of rest. Its state rides in
// checkpoints.
#pragma once

#include <axon/nn/model.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/monitor.hpp>

#include <optional>
#include <string>

namespace axon::train {

struct ReduceLROnPlateauOptions {
  std::string monitor = "val_loss";
  double factor = 0.1;
  int patience = 10;
  std::string mode = "auto";
  double min_delta = 1e-4;
  int cooldown = 0;
  double min_lr = 0;
};

class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(const ReduceLROnPlateauOptions& options);
  // After epoch `epoch` (0-based), the optimizer's rate being `learning_rate`:
  // the new rate (float32, as Keras' variable holds it), if it changes.
  std::optional<float> on_epoch_end(int epoch, const EpochValues& logs, float learning_rate);
  // "Epoch 5: ReduceLROnPlateau reducing learning rate to 0.05000000074505806."
  static std::string message(int epoch, float learning_rate);

  std::string state() const;
  void restore_state(const std::string& json_text);

 private:
  ReduceLROnPlateauOptions options_;
  Monitor monitor_;
  std::optional<double> best_;
  int wait_ = 0, cooldown_counter_ = 0;
};

// ReduceLROnPlateau on Model::fit: sets the new rate on every replica and
// prints Keras' line. The rate it left rides in checkpoints with its state.
class ReduceLROnPlateauCallback : public nn::Callback, public CheckpointedState {
 public:
  ReduceLROnPlateauCallback(nn::Model& model, const ReduceLROnPlateauOptions& options) : model_(model), logic_(options) {}
  void on_epoch_end(const nn::EpochLogs& logs) override;
  void set_verbose(bool verbose) { verbose_ = verbose; }

  std::string state_key() const override { return "reduce_lr_on_plateau"; }
  std::string save_state() const override;
  void load_state(const std::string& json_text) override;

 private:
  nn::Model& model_;
  ReduceLROnPlateau logic_;
  bool verbose_ = true;
};

}  // namespace axon::train
