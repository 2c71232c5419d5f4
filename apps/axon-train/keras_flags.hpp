// The flags that give axon-train Keras' losses, learning-rate schedules and
// callbacks, each a KeywordList of the Keras object's own arguments:
//   --loss categorical_crossentropy:label_smoothing=0.1
//   --metrics mse --metrics sparse_top_k_categorical_accuracy:k=3
//   --lr-schedule cosine:decay_steps=5000,warmup_steps=500,warmup_target=0.01
//   --early-stopping monitor=val_loss,patience=3,restore_best_weights=true
//   --reduce-lr-on-plateau factor=0.5,patience=2
//   --model-checkpoint filepath=best.safetensors,monitor=val_accuracy
// docs/cli.md lists every name and key.
#pragma once

#include <axon/nn/loss.hpp>
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/train/best_model.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>

#include <memory>
#include <string>
#include <vector>

namespace axon::train_app {

// exponential, piecewise, polynomial, inverse_time, cosine, cosine_restarts;
// the schedule starts from `initial_learning_rate` (the optimizer's rate).
std::unique_ptr<nn::LearningRateSchedule> schedule_from_flag(const std::string& text, double initial_learning_rate);
// "exponential, piecewise, ...", for --help.
std::string schedule_flag_names();

// A loss by Keras' snake_case or class name with its arguments
// (from_logits, label_smoothing, delta); from_logits defaults to true, as
// axon-train's default loss reads logits.
nn::LossOptions loss_from_flag(const std::string& text);

// Keras' metrics besides accuracy, one per --metrics (NAME or NAME:k=K,name=N;
// several plain names may share one: --metrics mse,mae). Accuracy's names
// are taken and dropped: axon always reports accuracy.
std::vector<nn::MetricOptions> metrics_from_flags(const std::vector<std::string>& texts);

train::EarlyStoppingOptions early_stopping_from_flag(const std::string& text);
train::ReduceLROnPlateauOptions reduce_lr_from_flag(const std::string& text);
// ModelCheckpoint: filepath (required), monitor, mode, save_best_only
// (default true here: a file written every epoch is what --save and
// --checkpoint-dir already give), initial_value_threshold.
struct ModelCheckpointOptions {
  std::string filepath;
  bool save_best_only = true;
  train::BestModelOptions best;
};
ModelCheckpointOptions model_checkpoint_from_flag(const std::string& text);

}  // namespace axon::train_app
