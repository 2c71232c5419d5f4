// Errors that surface only when the host looks: Keras' TerminateOnNaN for
// Model::fit, and the points where the host waits for every device so
// that a failure of queued work is seen before anything is written.
//
// Kernels are queued (on a GPU they run after the call returns), so a
// plugin may report a failed kernel only at the next synchronize(). The
// training loop reads little back (the loss sums), and a plugin's copy need
// not report an earlier kernel's failure, so without these points such an
// error could pass unseen and its results be saved.
#pragma once

#include <axon/device.hpp>
#include <axon/error.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/model.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace axon::train {

// Waits for the queued work of every device, in order; the first failure is
// Device::synchronize's RuntimeError ("synchronize /device:GPU:1: <the
// plugin's message>").
void synchronize_devices(const std::vector<Device*>& devices);
// Of the devices holding the model's replicas in this process.
void synchronize_replicas(const nn::Model& model);

// Training produced NaN or Inf: a step's loss ("loss is nan at epoch 2/5,
// step 17/938 (global step 955)"), or weights about to be checkpointed
// ("weights are not finite at ...: conv2d/kernel holds nan at element 3").
class TrainingDiverged : public RuntimeError {
 public:
  TrainingDiverged(const std::string& message, int64_t global_step)
      : RuntimeError(message), global_step(global_step) {}
  int64_t global_step;  // optimizer steps, the failing one included
};

// "epoch 2/5, step 17/938 (global step 955)", or "the end of epoch 2/5
// (global step 1876)" when `step` is 0 (steps done in the epoch).
std::string training_position(int epoch, int epochs, int64_t step, int64_t steps, int64_t global_step);

// Stops fit at the first step whose loss is not finite (TrainingDiverged),
// before any later callback sees that step, so put it first in
// FitOptions::callbacks. It reads the running loss after every step (8
// bytes, which waits for the step: one synchronisation per step); the
// running sum keeps a NaN or Inf, so no step's can pass unseen.
//
// After each epoch's last step (before validation) it synchronises every
// replica's device, so a failure of queued work stops the run there, and
// checks the weights: a NaN can reach them through the gradients while the
// loss stays finite (a ReLU turns a NaN activation into 0). At the epoch's
// end (after validation, before the callbacks that write files) it
// synchronises again.
class TerminateOnNaN : public nn::Callback {
 public:
  explicit TerminateOnNaN(nn::Model& model) : model_(model) {}
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  nn::Model& model_;
  int epoch_ = 0, epochs_ = 0;
  int64_t steps_ = 0;
};

// "nan", "inf" or "-inf".
std::string non_finite_name(double v);

}  // namespace axon::train
