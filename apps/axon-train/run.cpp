#include "run.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/sequential.hpp>
#include <axon/profile.hpp>
#include <axon/strategy.hpp>
#include <axon/train/metrics_csv.hpp>
#include <axon/train/progress.hpp>
#include <axon/train/weights.hpp>

#include <unistd.h>

#include <cstdio>
#include <memory>

namespace axon::train_app {

RunResult train_on(Strategy& strategy, const Options& opts, const data::ImageDataset& ds, bool write_files) {
  strategy.check_global_batch(opts.batch_size);
  std::unique_ptr<nn::Sequential> model = nn::make_cnn(10);
  model->build({ds.train.rows, ds.train.cols, 1}, strategy, opts.seed);
  nn::AdamOptions adam;
  adam.learning_rate = opts.learning_rate;
  model->compile(adam);
  if (!opts.quiet) {
    std::printf("%s\n", strategy.describe(opts.batch_size).c_str());
    if (opts.verbose) std::fputs(model->summary().c_str(), stdout);
    std::fflush(stdout);
  }

  nn::FitOptions fit;
  fit.epochs = opts.epochs;
  fit.batch_size = opts.batch_size;
  fit.seed = opts.seed;
  fit.validation_data = &ds.test;
  fit.prefetch = opts.prefetch;
  train::ProgressBar progress(stdout, ::isatty(::fileno(stdout)) != 0);
  ReplicaTimesReport times(stdout);
  std::unique_ptr<train::MetricsCsvLogger> csv;
  if (!opts.quiet) fit.callbacks.push_back(&progress);
  if (opts.verbose) fit.callbacks.push_back(&times);
  if (write_files && opts.metrics_csv) {
    csv = std::make_unique<train::MetricsCsvLogger>(*opts.metrics_csv);
    fit.callbacks.push_back(csv.get());
  }

  if (opts.profile) {
    reset_op_times();
    set_op_profiling(true);
  }
  RunResult r;
  r.device = replicas_label(strategy);
  r.history = model->fit(ds.train, fit);
  if (opts.profile) set_op_profiling(false);

  if (write_files && opts.save) {
    train::save_weights(*model, *opts.save);
    if (!opts.quiet) std::printf("Saved weights to %s\n", opts.save->c_str());
  }
  if (!opts.quiet) {
    print_run_summary(stdout, r);
    if (opts.profile) {
      double total = 0;
      for (const OpTime& t : op_times()) total += t.seconds;
      std::printf("%-38s %-16s %8s %10s %7s\n", "op", "device", "calls", "seconds", "share");
      for (const OpTime& t : op_times())
        std::printf("%-38s %-16s %8lld %10.3f %6.1f%%\n", t.op.c_str(), t.device.c_str(),
                    static_cast<long long>(t.calls), t.seconds, total > 0 ? 100 * t.seconds / total : 0.0);
    }
    // While the model still holds its buffers.
    if (opts.verbose)
      for (Device* d : strategy.replica_devices()) print_memory(stdout, *d);
    std::fflush(stdout);
  }
  return r;
}

}  // namespace axon::train_app
