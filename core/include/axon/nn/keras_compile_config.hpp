// The compile_config of a .keras file's config.json (what model.compile()
// was given): the optimizer with its hyperparameters and learning rate (a
// number or a schedule), the loss with its settings and the metrics.
// axon-train's --model m.keras and keras::models::load_model read it;
// axon-train's flags override the file.
#pragma once

#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/nn/optimizer.hpp>

#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

struct KerasCompileConfig {
  std::optional<OptimizerOptions> optimizer;  // absent: the model was saved uncompiled
  std::optional<LossOptions> loss;            // absent: none in the file
  std::string schedule_json;  // the learning rate as Keras' serialised schedule ("" for a number)
  std::string describe;       // "SGD(momentum=0.9, nesterov=True) on CosineDecay", for the start line
  std::vector<MetricOptions> metrics;  // compiled metrics besides accuracy (which axon always reports)
};

// UsageError naming `file` and the key for anything axon cannot follow: an
// unknown optimizer, loss or metric, a setting out of range or axon lacks, EMA, loss scaling, gradient accumulation.
KerasCompileConfig read_compile_config(const std::string& config_json, const std::string& file);

class Model;
class LearningRateSchedule;
// The compile_config of a compiled model (JSON text): the optimizer with its
// rate or `schedule` (nullptr: a constant rate), the loss, accuracy and the
// compiled metrics, as Keras 3 writes it and its load_model compiles from.
std::string write_compile_config(Model& model, const LearningRateSchedule* schedule);

}  // namespace axon::nn
