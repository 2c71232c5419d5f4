// Keras 3's ReduceLROnPlateau, as decisions on an epoch's logs: after
// `patience` epochs without improvement, the learning rate times `factor`
// (not below min_lr), then `cooldown` epochs of rest. Its state rides in
// checkpoints.
#pragma once

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

}  // namespace axon::train
