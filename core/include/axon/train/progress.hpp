// Keras' progress output for fit():
//   Epoch 1/5
//   938/938 [==============================] - 9s 10ms/step - loss: 0.5012 - accuracy: 0.8170 - val_loss: 0.3900 - val_accuracy: 0.8590
// On a terminal the bar is redrawn in place (at most every `interval`
// seconds, each redraw reading the metrics from the device); otherwise only
// the final line of each epoch is printed, so logs get one line per epoch.
#pragma once

#include <axon/nn/callback.hpp>

#include <chrono>
#include <cstdio>
#include <string>

namespace axon::train {

// "938/938 [==============================]"; width 30 like Keras.
std::string progress_bar(int64_t current, int64_t target);
// Keras' per-step time: "10ms/step", "2s/step", "850us/step".
std::string time_per_step(double seconds_per_step);
// " - loss: 0.5012": 4 decimals, or 4-digit scientific below 1e-3.
std::string metric(const std::string& name, double value);
// The epoch's final line.
std::string epoch_line(const nn::EpochLogs& logs);

// Whether the bar is redrawn in place: as AXON_PROGRESS_BAR says (a
// boolean; UsageError otherwise), else when stdout is a terminal and no MPI
// launcher started the process (mpirun hands its ranks a terminal even when
// its own output goes to a file).
bool redraw_progress();

class ProgressBar : public nn::Callback {
 public:
  ProgressBar(std::FILE* out, bool interactive, double interval_seconds = 0.1);
  void on_epoch_begin(int epoch, int epochs, int64_t steps) override;
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) override;
  void on_epoch_end(const nn::EpochLogs& logs) override;

 private:
  void draw(const std::string& line);

  std::FILE* out_;
  bool interactive_;
  double interval_;
  int64_t steps_ = 0;
  size_t last_width_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace axon::train
