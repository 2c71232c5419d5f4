// Keras 3's ModelCheckpoint(save_best_only=True), as a decision on an
// epoch's logs: save when the monitored value improves on the best so far
// (or on initial_value_threshold). Its state rides in checkpoints.
#pragma once

#include <axon/train/monitor.hpp>

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

}  // namespace axon::train
