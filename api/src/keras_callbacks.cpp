// keras::callbacks: each makes the core's callback for the model fit trains.
#include <axon/api/keras.hpp>
#include <axon/train/best_model.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/metrics_csv.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>
#include <axon/train/tensorboard.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/train/weights.hpp>

namespace axon::keras::callbacks {
namespace {

// A user's callback, passed on to fit by reference.
class Forward : public nn::Callback {
 public:
  explicit Forward(nn::Callback& to) : to_(to) {}
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

}  // namespace

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

Callback EarlyStopping(const EarlyStoppingOptions& options) {
  return {[options](nn::Model& model, int64_t) { return std::make_unique<train::EarlyStoppingCallback>(model, options); }};
}

Callback ReduceLROnPlateau(const ReduceLROnPlateauOptions& options) {
  return {[options](nn::Model& model, int64_t) {
    return std::make_unique<train::ReduceLROnPlateauCallback>(model, options);
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

Callback Custom(nn::Callback& callback) {
  return {[&callback](nn::Model&, int64_t) { return std::make_unique<Forward>(callback); }};
}

}  // namespace axon::keras::callbacks
