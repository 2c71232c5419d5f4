// The compile_config of a .keras file's config.json (what model.compile()
// was given): the optimizer with its hyperparameters and learning rate (a
// number or a schedule), and the loss with its settings. axon reports the
// loss and accuracy: other metrics are named so that the caller can say it
// leaves them out. axon-train's --model m.keras and keras::models::load_model
// read it; axon-train's flags override the file.
#pragma once

#include <axon/nn/loss.hpp>
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
  std::vector<std::string> other_metrics;  // compiled metrics besides accuracy ("mae", "top_k_categorical_accuracy")
};

// UsageError naming `file` and the key for anything axon cannot follow: an
// unknown optimizer or loss, a loss setting out of range or axon lacks, EMA, loss scaling, gradient accumulation.
KerasCompileConfig read_compile_config(const std::string& config_json, const std::string& file);

}  // namespace axon::nn
