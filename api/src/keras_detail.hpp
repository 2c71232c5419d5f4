// What the Keras files of the API share inside the library: the functional
// graph's nodes and the JSON made of them, and BackupAndRestore's callback,
// which fit drives itself (it restores before training and cleans up after).
#pragma once

#include <axon/api/keras.hpp>
#include <axon/strategy.hpp>
#include <axon/train/checkpoint.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace axon::keras::detail {

// One call of a layer (or an Input) with its per-sample output shape.
struct Node {
  std::string class_name;  // "InputLayer" for an Input
  nlohmann::json config;   // Keras' config, its name filled in
  std::string name;
  std::vector<std::shared_ptr<const Node>> inputs;
  bool list_input = false;  // called on a list (a merge layer's form)
  Shape shape;
};

// Keras 3's functional model JSON (the form axon's Keras reader reads) of
// the layers between `inputs` and `outputs`; UsageError naming the model
// and the layer when `outputs` is not computed from `inputs` alone.
std::string functional_json(const KerasTensor& inputs, const KerasTensor& outputs, const std::string& name);

// Keras' snake_case default name of a layer class ("MaxPooling2D" ->
// "max_pooling2d").
std::string snake_case(const std::string& class_name);

// A Custom callback, passed on to fit by reference.
class Forward : public nn::Callback {
 public:
  explicit Forward(nn::Callback& to) : to_(to) {}
  nn::Callback& target() const { return to_; }
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override { to_.on_epoch_begin(epoch, epochs, steps); }
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override {
    to_.on_batch_end(step, read);
  }
  void on_epoch_end(const nn::EpochLogs& logs) override { to_.on_epoch_end(logs); }
  bool stop_training() const override { return to_.stop_training(); }
  void on_train_end(const nn::History& history) override { to_.on_train_end(history); }

 private:
  nn::Callback& to_;
};

// BackupAndRestore's callback: CheckpointCallback's files in its folder.
class BackupAndRestoreCallback : public nn::Callback {
 public:
  BackupAndRestoreCallback(nn::Model& model, std::filesystem::path dir, int64_t save_freq);
  // Before training: the newest backup that reads back whole restored into
  // the model and `states` (the other callbacks'), else a fresh start.
  // `strategy` (null: one process) hands the chief's backup to every worker.
  train::TrainingPosition restore(const train::RunIdentity& run, std::vector<train::CheckpointedState*> states,
                                  Strategy* strategy);
  // After a fit that ended: the folder removed, as Keras does.
  void finish();

  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  nn::Model& model_;
  train::CheckpointDir dir_;
  int64_t save_freq_;
  std::unique_ptr<train::CheckpointCallback> checkpoints_;  // the chief's
};

}  // namespace axon::keras::detail
