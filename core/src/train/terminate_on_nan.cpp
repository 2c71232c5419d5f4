#include <axon/train/terminate_on_nan.hpp>
#include <axon/train/weight_tensors.hpp>

#include <cmath>
#include <span>

namespace axon::train {

void synchronize_devices(const std::vector<Device*>& devices) {
  for (Device* d : devices) d->synchronize();
}

void synchronize_replicas(const nn::Model& model) { synchronize_devices(model.strategy().replica_devices()); }

std::string non_finite_name(double v) {
  if (std::isnan(v)) return "nan";
  return v < 0 ? "-inf" : "inf";
}

std::string training_position(int epoch, int epochs, int64_t step, int64_t steps, int64_t global_step) {
  const std::string global = " (global step " + std::to_string(global_step) + ")";
  if (step == 0) return "the end of epoch " + std::to_string(epoch) + "/" + std::to_string(epochs) + global;
  return "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs) + ", step " + std::to_string(step) + "/" +
         std::to_string(steps) + global;
}

void TerminateOnNaN::on_epoch_begin(int epoch, int epochs, int64_t steps) {
  epoch_ = epoch;
  epochs_ = epochs;
  steps_ = steps;
}

void TerminateOnNaN::on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) {
  // The epoch's running mean: finite until a step's loss sum is not.
  const nn::MetricValues m = read();
  if (!std::isfinite(m.loss)) {
    const int64_t global = model_.optimizer().iterations();
    throw TrainingDiverged("loss is " + non_finite_name(m.loss) + " at " +
                               training_position(epoch_, epochs_, step + 1, steps_, global),
                           global);
  }
  if (step + 1 < steps_) return;
  // Before validation queues more work on a device that may have failed.
  synchronize_replicas(model_);
  nn::Replica& r0 = model_.replica(0);  // every replica holds the same weights
  const WeightLayout layout = WeightLayout::of(r0);
  const std::vector<float> values = r0.buffers().values().to_vector<float>();
  try {
    for (size_t i = 0; i < layout.names.size(); ++i)
      check_finite_for_writing(layout.names[i],
                               std::span<const float>(values.data() + layout.offsets[i],
                                                      static_cast<size_t>(numel(layout.shapes[i]))));
  } catch (const NonFiniteWeights& e) {
    const int64_t global = model_.optimizer().iterations();
    throw TrainingDiverged("weights are not finite at " + training_position(epoch_, epochs_, 0, steps_, global) +
                               " (" + e.detail + ")",
                           global);
  }
}

void TerminateOnNaN::on_epoch_end(const nn::EpochLogs&) { synchronize_replicas(model_); }

}  // namespace axon::train
