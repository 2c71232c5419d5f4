// What Keras' EarlyStopping, ReduceLROnPlateau and ModelCheckpoint share
// (keras.callbacks.MonitorCallback): the logged quantity they watch, which
// way is better, and when a value counts as an improvement.
#pragma once

#include <axon/nn/callback.hpp>

#include <map>
#include <optional>
#include <string>

namespace axon::train {

// An epoch's logs by Keras' names: "loss", "accuracy", "val_loss", ...
using EpochValues = std::map<std::string, double>;
// Of fit's logs: loss and accuracy, and val_loss and val_accuracy when the
// epoch had validation data.
EpochValues epoch_values(const nn::EpochLogs& logs);

class Monitor {
 public:
  // mode "min", "max" or "auto" (from the name: a loss is minimised, an
  // accuracy maximised, as Keras infers from its metrics); min_delta's sign
  // is ignored, as Keras does. UsageError for another mode, or "auto" on a
  // name whose direction is unknown.
  Monitor(std::string name, const std::string& mode, double min_delta);
  const std::string& name() const { return name_; }
  bool maximizes() const { return maximize_; }
  // Keras' _is_improvement: better than `reference` by more than min_delta,
  // compared in float32 as Keras' ops compare; anything improves on none.
  bool improves(double value, std::optional<double> reference) const;
  // The watched value of an epoch's logs; UsageError naming the logs there
  // are when it is missing.
  double value(const EpochValues& logs) const;

 private:
  std::string name_;
  bool maximize_ = false;
  double min_delta_ = 0;
};

}  // namespace axon::train
