// keras::callbacks: each makes the core's callback for the model fit trains.
#include "keras_detail.hpp"

#include <axon/api/keras.hpp>
#include <axon/train/best_model.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/metrics_csv.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>
#include <axon/train/tensorboard.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/train/weights.hpp>

namespace axon::keras::callbacks {
Callback CSVLogger(const std::filesystem::path& file) {
  return {[file](nn::Model&, int64_t) { return std::make_unique<train::MetricsCsvLogger>(file); }};
}

Callback TensorBoard(const std::filesystem::path& log_dir, int64_t update_freq) {
  return {[log_dir, update_freq](nn::Model&, int64_t batch_size) {
    return std::make_unique<train::TensorBoardCallback>(log_dir, update_freq, batch_size);
  }};
}

Callback TerminateOnNaN() {
  return {[](nn::Model& model, int64_t) { return std::make_unique<train::TerminateOnNaN>(model); }};
}

Callback EarlyStopping(const EarlyStoppingOptions& options, int verbose) {
  return {[options, verbose](nn::Model& model, int64_t) {
    auto c = std::make_unique<train::EarlyStoppingCallback>(model, options);
    c->set_verbose(verbose != 0 && model.strategy().is_chief());
    return c;
  }};
}

Callback ReduceLROnPlateau(const ReduceLROnPlateauOptions& options, int verbose) {
  return {[options, verbose](nn::Model& model, int64_t) {
    auto c = std::make_unique<train::ReduceLROnPlateauCallback>(model, options);
    c->set_verbose(verbose != 0 && model.strategy().is_chief());
    return c;
  }};
}

Callback ModelCheckpoint(const std::filesystem::path& file, const std::string& monitor, bool save_best_only) {
  return {[file, monitor, save_best_only](nn::Model& model, int64_t) {
    train::BestModelOptions o;
    o.monitor = monitor;
    return std::make_unique<train::BestModelCallback>(
        o, file.string(), [&model, file] { train::save_weights(model, file); }, save_best_only);
  }};
}

Callback ProgbarLogger() { return {nullptr, /*progress_bar=*/true}; }

Callback Custom(nn::Callback& callback) {
  return {[&callback](nn::Model&, int64_t) { return std::make_unique<detail::Forward>(callback); }};
}

}  // namespace axon::keras::callbacks
