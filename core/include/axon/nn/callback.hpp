// What Model::fit reports while it trains, Keras style.
#pragma once

#include <axon/nn/metrics.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace axon::nn {

// Where one replica's time went during an epoch (host time: on a GPU,
// kernels run after they are queued, so waits move into the all-reduce).
struct ReplicaTimes {
  std::string device;        // "/device:CPU:1"
  double compute = 0;        // its forward, backward and optimizer work
  double wait = 0;           // waiting for slower replicas of this process
};

// One epoch's results.
struct EpochLogs {
  int epoch = 0;  // 1-based
  int epochs = 0;
  int64_t steps = 0, samples = 0;
  double loss = 0, accuracy = 0;
  NamedValues metrics;       // the compiled metrics besides accuracy, in compile's order
  double learning_rate = 0;  // the optimizer's at the epoch's last step
  bool has_validation = false;
  double val_loss = 0, val_accuracy = 0;
  NamedValues val_metrics;  // the same metrics on the validation data
  double seconds = 0;             // training steps of the epoch, metrics read included
  double validation_seconds = 0;  // the evaluation on the validation data
  double input_wait_seconds = 0;  // time the device loop waited for the next batch
  double all_reduce_seconds = 0;  // the strategy's all-reduce the steps waited for (with other workers' lag)
  double all_reduce_hidden_seconds = 0;  // all-reduce calls that ran while backward went on (with other workers' lag)
  std::vector<ReplicaTimes> replicas;  // this process's replicas
};

struct History {
  std::vector<EpochLogs> epochs;
  // Set when a callback ended training early (EarlyStopping): the last epoch run (1-based).
  int early_stopped_epoch = 0;
  // Set when fit returned early on FitOptions::stop_requested: the epoch
  // (1-based) it was in and the steps of it done.
  bool stopped = false;
  int stopped_epoch = 0;
  int64_t stopped_step = 0;
};

class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_epoch_begin(int epoch, int epochs, int64_t steps) { (void)epoch, (void)epochs, (void)steps; }
  // After each training step (0-based). `read` synchronises with the device
  // to read the running loss/accuracy: call it only when they are shown.
  virtual void on_batch_end(int64_t step, const std::function<MetricValues()>& read) { (void)step, (void)read; }
  virtual void on_epoch_end(const EpochLogs& logs) { (void)logs; }
  // Asked after every callback's on_epoch_end: true ends fit there (Keras'
  // model.stop_training, set by EarlyStopping).
  virtual bool stop_training() const { return false; }
  // When fit ends having trained its epochs or been stopped by a callback
  // (not when FitOptions::stop_requested interrupted it: that run resumes).
  virtual void on_train_end(const History& history) { (void)history; }
};

}  // namespace axon::nn
