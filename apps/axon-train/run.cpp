// One training run of axon-train, a user of the C++ API (<axon/axon.hpp>):
// the model comes from its Keras JSON through keras::models::model_from_json,
// built on the run's strategy (distribute::StrategyScope) or in its device's
// scope (axon::device, the default strategy) from
// keras::utils::set_random_seed's seed, compiled through keras::Model
// (optimizer, schedule, loss, metrics) and trained by keras::Model::fit over
// the data set (a data::SampleSource) with the API's callbacks for the flags
// (TerminateOnNaN first, the progress bar, TensorBoard, CSVLogger,
// EarlyStopping, ReduceLROnPlateau). axon-train's own go in with
// callbacks::Custom: the replica times report, ModelCheckpoint's files (they
// carry the run's metadata, as --save's do) and, last, the checkpoints of
// --checkpoint-dir with --resume (checkpoints.cpp, a StateRestorer). The
// core is called for what the API does not and should not cover:
// --initial-weights, --dry-run's placement plan, --profile, the weights
// files' metadata and the report.
#include "run.hpp"

#include "checkpoints.hpp"
#include "placement_report.hpp"

#include "stop_signals.hpp"

#include <axon/api/distribute.hpp>
#include <axon/api/eager.hpp>
#include <axon/api/keras.hpp>
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/limits.hpp>
#include <axon/log.hpp>
#include <axon/nn/keras_compile_config.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/model.hpp>
#include <axon/parse.hpp>
#include <axon/profile.hpp>
#include <axon/runtime.hpp>
#include <axon/strategy.hpp>
#include <axon/train/best_model.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/progress.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/train/weights.hpp>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace axon::train_app {
namespace {

// After training diverged: what was kept of it.
std::string not_saved(const Options& opts, bool write_files, const train::CheckpointCallback* checkpoints) {
  std::string s = "weights not saved";
  if (write_files && opts.save) s += " to " + *opts.save;
  if (checkpoints != nullptr && !checkpoints->last_file().empty())
    s += "; the newest checkpoint, " + checkpoints->last_file().string() + ", is from before it";
  return s;
}

// --initial-weights: the chief's bytes (read_initial_weights), set by every worker.
void set_initial_weights(nn::Model& model, Strategy& strategy, const Options& opts) {
  std::string bytes = strategy.is_chief() ? opts.initial_weights_bytes : std::string();
  strategy.broadcast_bytes(bytes, "the initial weights");
  train::set_weights(model, bytes, *opts.initial_weights);
  // A .keras model's optimizer goes on from its saved state, as in Keras.
  if (!opts.optimizer_from_model_file) return;
  const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const train::KerasArchive archive = train::read_keras_archive(view, *opts.model_file, bytes.size());
  if (train::set_keras_optimizer_state(model, archive, *opts.model_file)) {
    if (!opts.quiet)
      std::printf("%s goes on from the state saved in %s (step %lld)\n",
                  nn::optimizer_keras_class(model.optimizer().kind()), parse::printable_path(*opts.model_file).c_str(),
                  static_cast<long long>(model.optimizer().iterations()));
  } else {
    log::warning("axon-train", *opts.model_file + " holds no optimizer state for this " +
                                   nn::optimizer_keras_class(model.optimizer().kind()) + ": it starts afresh");
  }
}

// What a weights file keeps besides the weights (a safetensors file's
// metadata; a .keras file's config.json takes the model and compile_config).
train::WeightsMetadata weights_metadata(nn::Model& model, const Options& opts, const data::Dataset& ds,
                                        const nn::History& history, const nn::LearningRateSchedule* schedule) {
  train::WeightsMetadata m;
  m["model"] = nn::keras_json(model, model.input_shape());
  m["compile_config"] = nn::write_compile_config(model, schedule);
  m["optimizer"] = nn::optimizer_keras_class(model.optimizer().kind());
  if (model.optimizer().describe() != "--optimizer adam") m["optimizer_flags"] = model.optimizer().describe();
  // A model ending in softmax outputs probabilities to Keras (from_logits=False);
  // a cross-entropy reads its logits either way.
  m["loss"] = model.loss().keras_call();
  char lr[32];
  std::snprintf(lr, sizeof lr, "%.9g", static_cast<double>(opts.learning_rate));
  m["learning_rate"] = lr;
  m["batch_size"] = std::to_string(opts.batch_size);
  m["epochs"] = std::to_string(opts.epochs);
  m["seed"] = std::to_string(opts.seed);
  m["train_samples"] = std::to_string(ds.train->size());
  if (!ds.class_names.empty()) m["class_names"] = data::class_names_json(ds.class_names);
  if (opts.initial_weights) m["initial_weights"] = *opts.initial_weights;
  if (!history.epochs.empty() && history.epochs.back().has_validation) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f", history.epochs.back().val_accuracy);
    m["val_accuracy"] = text;
  }
  return m;
}

}  // namespace

Shape input_shape_of(const data::Dataset& ds) { return ds.train->layout().shape(); }

namespace {

// The loss against the model's output units (binary cross-entropy needs 1,
// the categorical ones 2 or more); on one unit, the labels against what it
// reads: 0 and 1 for binary cross-entropy, any number for a regression loss.
// True when the labels need no class-range check (one unit).
bool check_loss_fits(const Options& opts, int64_t units, const data::Dataset& ds, const std::string& model) {
  try {
    nn::make_loss(opts.loss)->check_output(units);
  } catch (const UsageError& e) {
    throw UsageError(std::string(e.what()) + " (" + model + ")");
  }
  if (units != 1) return false;
  if (opts.loss.kind == nn::LossKind::binary_crossentropy)
    for (const data::LabelExtent& e : {ds.train_labels(), ds.validation_labels()})
      if (e.max > 1)
        throw UsageError(e.where + ": label " + std::to_string(e.max) + " (sample " + std::to_string(e.index) +
                         ") is not 0 or 1, the labels binary_crossentropy reads (" + model + ")");
  return true;
}

}  // namespace

namespace {

// The built-in CNN's classes: the guide's 10 for numbered labels (more if
// they need them); an image folder's own.
int cnn_classes(const data::Dataset& ds) {
  return ds.class_names.empty() ? std::max(10, ds.classes_needed()) : ds.classes_needed();
}

}  // namespace

std::string model_json_for(const Options& opts, const data::Dataset& ds) {
  if (opts.model_file) return opts.model_json;
  return nn::keras_json(*nn::make_cnn(cnn_classes(ds)), input_shape_of(ds));
}

nn::KerasModel model_for(const Options& opts, const data::Dataset& ds) {
  const Shape images = input_shape_of(ds);
  if (!opts.model_file) {
    // The built-in CNN, its weights' shapes read from its own Keras JSON.
    if (images[0] > limits::kMaxImageSide || images[1] > limits::kMaxImageSide)
      throw UsageError("the built-in CNN takes images of at most " + std::to_string(limits::kMaxImageSide) + "x" +
                       std::to_string(limits::kMaxImageSide) + " pixels; the data's are " + shape_string(images) +
                       ": pass a --model made for them");
    const int classes = cnn_classes(ds);
    nn::KerasModel k = nn::model_from_keras_json(model_json_for(opts, ds), "the built-in CNN");
    k.model = nn::make_cnn(classes);
    check_loss_fits(opts, classes, ds, "the built-in CNN");
    return k;
  }
  nn::KerasModel k = nn::model_from_keras_json(opts.model_json, *opts.model_file);
  if (k.input_shape != images)
    throw UsageError(*opts.model_file + ": the model's input is " + shape_string(k.input_shape) + ", the data's images " +
                     shape_string(images));
  const int64_t classes = k.output_shape.at(0);
  if (check_loss_fits(opts, classes, ds, *opts.model_file)) return k;
  if (!ds.class_names.empty() && ds.classes_needed() > classes)
    throw UsageError(parse::printable(ds.path) + " holds " + std::to_string(ds.classes_needed()) +
                     " classes but the model outputs " + std::to_string(classes) + " (" + *opts.model_file + ")");
  for (const data::LabelExtent& e : {ds.train_labels(), ds.validation_labels()})
    if (e.max >= classes)
      throw UsageError(e.where + ": label " + std::to_string(e.max) + " (sample " + std::to_string(e.index) +
                       ") is outside the model's " + std::to_string(classes) + " classes (0 to " +
                       std::to_string(classes - 1) + ", " + *opts.model_file + ")");
  return k;
}

namespace {

// On devices of host memory, a training step must fit in the machine's
// memory: refused here, before any allocation, not killed by the kernel in
// the first step. A GPU's own allocator reports what does not fit on it.
void check_fits_memory(const Placement& where, const Options& opts, const data::Dataset& ds) {
  const std::vector<Device*> devices =
      where.strategy != nullptr ? where.strategy->replica_devices() : std::vector<Device*>{where.device};
  for (const Device* d : devices)
    if (d == nullptr || !d->host_memory()) return;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return;
  nn::check_training_memory(model_for(opts, ds), std::min<int64_t>(opts.batch_size, ds.train->size()),
                            static_cast<double>(pages) * static_cast<double>(page),
                            opts.model_file ? *opts.model_file : "the built-in CNN");
}

// Keras' callbacks the flags ask for, in the order fit calls them: the API's
// EarlyStopping and ReduceLROnPlateau; ModelCheckpoint is axon-train's own
// (its files carry the run's metadata, as --save's do, and only the chief
// writes them).
struct KerasCallbacks {
  std::unique_ptr<train::BestModelCallback> model_checkpoint;
  std::vector<keras::callbacks::Callback> callbacks;
};

KerasCallbacks keras_callbacks(nn::Model& model, const Options& opts, const data::Dataset& ds, bool write_files,
                               const nn::LearningRateSchedule* schedule) {
  for (const std::string* monitor :
       {opts.early_stopping ? &opts.early_stopping->monitor : nullptr, opts.reduce_lr ? &opts.reduce_lr->monitor : nullptr,
        opts.model_checkpoint ? &opts.model_checkpoint->best.monitor : nullptr})
    if (monitor != nullptr && monitor->starts_with("val_") && !ds.validation)
      throw UsageError("a callback monitors " + *monitor + ", but this data has no validation set");
  KerasCallbacks k;
  const int verbose = opts.quiet ? 0 : 1;
  if (opts.early_stopping) k.callbacks.push_back(keras::callbacks::EarlyStopping(*opts.early_stopping, verbose));
  if (opts.reduce_lr) k.callbacks.push_back(keras::callbacks::ReduceLROnPlateau(*opts.reduce_lr, verbose));
  if (opts.model_checkpoint) {
    const ModelCheckpointOptions& mc = *opts.model_checkpoint;
    // Written by the chief alone; files written mid-run name no final accuracy.
    k.model_checkpoint = std::make_unique<train::BestModelCallback>(
        mc.best, mc.filepath,
        [&model, &opts, &ds, write_files, schedule, file = mc.filepath] {
          if (write_files) train::save_weights(model, file, weights_metadata(model, opts, ds, nn::History{}, schedule));
        },
        mc.save_best_only);
    k.model_checkpoint->set_verbose(!opts.quiet);
    k.callbacks.push_back(keras::callbacks::Custom(*k.model_checkpoint));
  }
  return k;
}

}  // namespace

std::string read_initial_weights(const Options& opts, const data::Dataset& ds) {
  const train::WeightLayout layout = train::WeightLayout::packed(model_for(opts, ds).weights);
  const std::string& file = *opts.initial_weights;
  std::string bytes = io::read_regular_file(file, train::max_weights_file_bytes(layout, file), "--initial-weights");
  train::check_weights(layout, bytes, file);
  return bytes;
}

RunResult train_on(const Placement& where, const Options& opts, const data::Dataset& ds, bool write_files,
                   const std::filesystem::path& tensorboard_dir) {
  // One device takes any batch (options checked it is positive).
  if (where.strategy != nullptr) where.strategy->check_global_batch(opts.batch_size);
  check_fits_memory(where, opts, ds);
  // Keras' schedule (its state rides in checkpoints).
  std::shared_ptr<const nn::LearningRateSchedule> schedule;
  if (!opts.lr_schedule.empty()) schedule = schedule_from_flag(opts.lr_schedule, opts.learning_rate);
  if (!opts.keras_schedule_json.empty()) schedule = nn::schedule_from_keras(opts.keras_schedule_json, *opts.model_file);

  // The model as a program of the API makes it: from its Keras JSON, its
  // weights from the seed on the strategy or in the device's scope, compiled.
  keras::Model keras_model = [&, json = model_json_for(opts, ds)] {
    keras::utils::set_random_seed(opts.seed);
    if (where.strategy != nullptr) {
      const distribute::StrategyScope scope(*where.strategy);
      return keras::models::model_from_json(json);
    }
    const DeviceContext scope = axon::device(where.device->name());
    return keras::models::model_from_json(json);
  }();
  keras::optimizers::Optimizer optimizer(opts.optimizer);
  optimizer.schedule = schedule;
  const std::vector<keras::metrics::Metric> compiled_metrics(opts.metrics.begin(), opts.metrics.end());
  keras_model.compile(optimizer, opts.loss, compiled_metrics);
  nn::Model& model = keras_model.model();
  Strategy& strategy = model.strategy();
  if (opts.initial_weights) set_initial_weights(model, strategy, opts);

  // --dry-run and --strict-placement: one step placed, not run, so every
  // missing kernel is known at once, before any training.
  const bool strict = Runtime::get().config().strict_placement;
  if (opts.dry_run || strict) {
    data::HostBatch batch;
    batch.size = std::min<int64_t>(opts.batch_size, ds.train->size());
    batch.format = ds.train->layout().format;
    batch.images.assign(static_cast<size_t>(batch.size * ds.train->layout().bytes()), 0);
    batch.labels.assign(static_cast<size_t>(batch.size), 0);
    const PlacementPlan plan = model.plan_train_step(batch);
    const std::string device = model.device().name();
    if (opts.dry_run) {
      print_placement_plan(stdout, plan, device);
      std::fflush(stdout);
    }
    if (strict && !plan.missing.empty())
      throw UsageError("--strict-placement: " + missing_kernels_message(plan, device));
    if (opts.dry_run) return RunResult{};
  }

  if (!opts.quiet) {
    std::printf("%s\n", strategy.describe(opts.batch_size).c_str());
    if (const int b = model.all_reduce_buckets(); b > 1)
      std::printf("Gradients summed in %d buckets of about %.3g MiB, each while backward goes on%s "
                  "(--all-reduce-bucket-mb)\n",
                  b, static_cast<double>(strategy.bucket_bytes()) / (1 << 20),
                  strategy.queues_all_reduce() ? ", queued on the devices between events" : "");
    if (opts.verbose) std::fputs(model.summary().c_str(), stdout);
    std::fflush(stdout);
  }

  RunResult r;
  r.device = replicas_label(strategy);
  if (opts.epochs == 0) {
    // Evaluation only, as Keras' model.evaluate on the validation data.
    const keras::Evaluation v = keras_model.evaluate(*ds.validation, opts.batch_size);
    if (!opts.quiet) {
      std::string metrics;
      for (const auto& [name, value] : v.metrics) metrics += train::metric(name, value);
      std::printf("Evaluated %s on %lld %s images: loss: %.4f - accuracy: %.4f%s\n",
                  parse::printable_path(*opts.initial_weights).c_str(), static_cast<long long>(ds.validation->size()),
                  ds.kind == "IDX" ? "test" : "validation", v.loss, v.accuracy, metrics.c_str());
    }
    train::synchronize_replicas(model);
    if (write_files && opts.save) {
      train::save_weights(model, *opts.save, weights_metadata(model, opts, ds, r.history, schedule.get()));
      if (!opts.quiet) std::printf("Saved weights to %s\n", parse::printable_path(*opts.save).c_str());
    }
    std::fflush(stdout);
    return r;
  }

  const int64_t steps = (ds.train->size() + opts.batch_size - 1) / opts.batch_size;
  const train::RunIdentity run{opts.seed, opts.batch_size, ds.train->size(), steps, opts.learning_rate,
                               ds.class_names.empty() ? std::string() : data::class_names_json(ds.class_names)};
  if (opts.checkpoint_dir && !opts.resume && write_files) {
    // Starting afresh would rotate the older run's checkpoints away.
    const std::vector<std::filesystem::path> old = train::CheckpointDir(*opts.checkpoint_dir).list();
    if (!old.empty())
      throw UsageError("--checkpoint-dir " + *opts.checkpoint_dir + " already holds checkpoints (newest: " +
                       old.front().string() + "); pass --resume to continue from it, or choose another folder");
  }

  keras::FitOptions fit;
  fit.epochs = opts.epochs;
  fit.batch_size = opts.batch_size;
  fit.seed = opts.seed;
  if (ds.validation) fit.validation_data = *ds.validation;
  fit.prefetch = opts.prefetch;
  fit.stop_requested = [] { return stop_signal() != 0; };
  fit.verbose = opts.quiet ? 0 : 1;  // redrawn as opts.redraw_progress says
  const bool progress_on_terminal = opts.redraw_progress && !opts.quiet;
  // First: a step whose loss is not finite reaches no other callback (no
  // checkpoint, CSV row or event of it), and every epoch ends synchronised.
  fit.callbacks.push_back(keras::callbacks::TerminateOnNaN());
  fit.callbacks.push_back(keras::callbacks::ProgbarLogger());
  if (!tensorboard_dir.empty())
    fit.callbacks.push_back(keras::callbacks::TensorBoard(tensorboard_dir, opts.tensorboard_every));
  ReplicaTimesReport times(stdout);
  if (opts.verbose) fit.callbacks.push_back(keras::callbacks::Custom(times));
  if (write_files && opts.metrics_csv) fit.callbacks.push_back(keras::callbacks::CSVLogger(*opts.metrics_csv));
  // Before the checkpoints, which keep what these decided at an epoch's end.
  const KerasCallbacks keras = keras_callbacks(model, opts, ds, write_files, schedule.get());
  fit.callbacks.insert(fit.callbacks.end(), keras.callbacks.begin(), keras.callbacks.end());
  std::unique_ptr<RunCheckpoints> checkpoints;
  if (opts.checkpoint_dir) {
    checkpoints = std::make_unique<RunCheckpoints>(model, run, *opts.checkpoint_dir, strategy, opts, write_files);
    fit.callbacks.push_back(keras::callbacks::Custom(*checkpoints));
  }
  const auto writer = [&] { return checkpoints ? checkpoints->writer() : nullptr; };

  if (opts.profile) {
    reset_op_times();
    set_op_profiling(true);
  }
  try {
    r.history = keras_model.fit(*ds.train, fit).logs;
  } catch (const train::TrainingDiverged& e) {
    if (progress_on_terminal) std::fputc('\n', stdout);  // end the progress bar's line
    std::fflush(stdout);
    throw train::TrainingDiverged(std::string(e.what()) + ": stopping; " + not_saved(opts, write_files, writer()),
                                  e.global_step);
  } catch (...) {
    if (progress_on_terminal) std::fputc('\n', stdout);
    std::fflush(stdout);
    throw;
  }
  if (opts.profile) set_op_profiling(false);

  if (r.history.stopped) {
    const int sig = stop_signal();
    if (progress_on_terminal) std::fputc('\n', stdout);  // end the progress bar's line
    std::fflush(stdout);
    // A failure of the work queued before the stop is the run's outcome, not the signal.
    train::synchronize_replicas(model);
    const train::TrainingPosition at{r.history.stopped_epoch - 1, r.history.stopped_step,
                                     model.optimizer().iterations(), {}};
    std::string stopped_at = "stopped by " + std::string(signal_name(sig)) + " at " + position(at, opts.epochs, steps);
    if (checkpoints && !checkpoints->stopped_file().empty()) {
      stopped_at += "; checkpoint " + checkpoints->stopped_file().string() +
                    ": continue with --resume --checkpoint-dir " + *opts.checkpoint_dir;
    } else if (opts.checkpoint_dir) {
      stopped_at += "; nothing trained since the last checkpoint, so nothing was written";
    } else {
      stopped_at += "; without --checkpoint-dir nothing was saved to resume from";
    }
    throw Stopped{128 + sig, stopped_at};
  }

  // Also when fit trained nothing (a run resumed at its last epoch's end).
  train::synchronize_replicas(model);
  if (write_files && opts.save) {
    try {
      train::save_weights(model, *opts.save, weights_metadata(model, opts, ds, r.history, schedule.get()));
    } catch (const train::NonFiniteWeights& e) {
      // The last step's gradients can be NaN with its loss finite.
      throw train::TrainingDiverged("weights are not finite after training (" + e.detail + "): " +
                                        not_saved(opts, write_files, writer()),
                                    model.optimizer().iterations());
    }
    if (!opts.quiet) std::printf("Saved weights to %s\n", parse::printable_path(*opts.save).c_str());
  }
  if (!opts.quiet) print_run_summary(stdout, r);
  // The table is the output --profile asks for: printed under --quiet too.
  if (opts.profile) {
    double total = 0;
    for (const OpTime& t : op_times()) total += t.seconds;
    std::printf("%-38s %-16s %8s %10s %7s\n", "op", "device", "calls", "seconds", "share");
    for (const OpTime& t : op_times())
      std::printf("%-38s %-16s %8lld %10.3f %6.1f%%\n", t.op.c_str(), t.device.c_str(),
                  static_cast<long long>(t.calls), t.seconds, total > 0 ? 100 * t.seconds / total : 0.0);
  }
  // While the model still holds its buffers.
  if (opts.verbose) {
    for (Device* d : strategy.replica_devices()) print_memory(stdout, *d);
    print_activation_memory(stdout, model);
  }
  std::fflush(stdout);
  return r;
}

}  // namespace axon::train_app
