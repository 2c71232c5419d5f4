// axon-train: trains the trainer's CNN (nn::make_cnn), or a Keras model given
// as JSON (--model), on an IDX folder or NumPy arrays (--data) and prints Keras-style progress. See docs/training.md and, for the
// strategies, docs/distributed.md.
#include "compare.hpp"
#include "device_choice.hpp"
#include "options.hpp"
#include "report.hpp"
#include "run.hpp"
#include "stop_signals.hpp"

#include <axon/api/distribute.hpp>
#include <axon/cli.hpp>
#include <axon/data/dataset.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>
#include <axon/runtime.hpp>
#include <axon/strategy.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/workers.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace axon;

namespace {

// What errors are prefixed with: "axon-train", or "axon-train (rank 1)" in a
// multi-worker job. run_main keeps the pointer, so the text is set in place.
char g_program[64] = "axon-train";

// Where --strategy trains: mirrored and multi-worker are the API's
// distribute::MirroredStrategy and distribute::MultiWorkerMirroredStrategy
// (the latter made first thing in main, as a TensorFlow program does, to
// know its rank before the data loads); the default is one chosen device,
// whose axon::device scope the model is built in. The device flags reach
// Runtime::init as a Config (apps/common, shared by every app).
struct TrainingStrategy {
  std::unique_ptr<distribute::MirroredStrategy> mirrored;
  distribute::MultiWorkerMirroredStrategy* multi_worker = nullptr;
  Device* device = nullptr;
  train_app::Placement placement() {
    if (mirrored) return {.strategy = &mirrored->strategy()};
    if (multi_worker != nullptr) return {.strategy = &multi_worker->strategy()};
    return {.device = device};
  }
};

TrainingStrategy make_strategy(const Runtime& rt, const train_app::Options& opts,
                               distribute::MultiWorkerMirroredStrategy* multi_worker) {
  TrainingStrategy s;
  if (opts.strategy != "default") {
    // Opened here first, so that a plugin failing to start is reported naming it.
    train_app::start_devices(rt, mirrored_devices(rt));
    if (opts.strategy == "mirrored")
      s.mirrored = std::make_unique<distribute::MirroredStrategy>();
    else
      s.multi_worker = multi_worker;
    s.placement().strategy->set_bucket_bytes(opts.all_reduce_bucket_bytes);
    return s;
  }
  const train_app::DeviceChoice choice = train_app::choose_device(rt, opts.device);
  if (!opts.quiet) {
    std::printf("%s on %s (%s): %s\n", opts.epochs == 0 ? "Evaluating" : "Training", choice.device->name().c_str(),
                choice.device->props().name, choice.reason.c_str());
    std::fflush(stdout);
  }
  s.device = choice.device;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // First: a SIGINT or SIGTERM from here on stops at the next step boundary.
  train_app::install_stop_handlers();
  std::unique_ptr<distribute::MultiWorkerMirroredStrategy> multi_worker;
  bool stopped_by_signal = false, quiet_exit = false;
  const int code = cli::run_main(g_program, [&] {
    std::optional<train_app::Options> parsed = train_app::parse_options(argc, argv);
    if (!parsed) return 0;
    train_app::Options& opts = *parsed;
    if (opts.layer_table) {
      std::fputs(nn::supported_layers_table().c_str(), stdout);
      return 0;
    }

    // A worker joins its job first (the API's strategy, made first thing as
    // in TensorFlow): only rank 0 prints progress and writes files; the
    // others print errors alone, prefixed with their rank.
    if (opts.strategy == "multi-worker") {
      // mpirun's rank is known before MPI is: even a failure to join is prefixed.
      if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK"))
        std::snprintf(g_program, sizeof g_program, "axon-train (rank %s)", rank);
      multi_worker = std::make_unique<distribute::MultiWorkerMirroredStrategy>(opts.collective_timeout_s);
      if (const int rank = multi_worker->cluster_resolver().task_id; rank != 0) {
        std::snprintf(g_program, sizeof g_program, "axon-train (rank %d)", rank);
        opts.quiet = true;
        opts.verbose = false;
        opts.config.log_level = "error";
      }
    }
    const bool chief = multi_worker == nullptr || multi_worker->is_chief();
    if (chief) train_app::check_outputs(opts);

    // A model file's summary needs no data: its input is its own.
    if (opts.summary && opts.model_file) {
      const nn::KerasModel k = nn::model_from_keras_json(opts.model_json, *opts.model_file);
      std::fputs(k.model->summary(k.input_shape).c_str(), stdout);
      return 0;
    }

    // Data first: a missing or corrupt data set is reported before any plugin loads.
    const auto t0 = std::chrono::steady_clock::now();
    data::DataOptions data_options;
    data_options.data = opts.data;
    data_options.validation_data = opts.validation_data;
    data_options.image_rows = opts.image_rows;
    data_options.image_cols = opts.image_cols;
    data_options.channels = opts.channels;
    data_options.validation_split = opts.validation_split;
    data_options.cache = opts.cache;
    data_options.seed = opts.seed;
    data_options.progress = !opts.quiet;
    if (opts.model_file) data_options.model_input = nn::model_from_keras_json(opts.model_json, *opts.model_file).input_shape;
    data::Dataset ds = data::load_dataset(data_options);
    if (opts.train_limit > 0) ds.train->truncate(opts.train_limit);
    if (opts.test_limit > 0 && ds.validation) ds.validation->truncate(opts.test_limit);
    if (opts.epochs == 0 && !ds.validation)
      throw UsageError("--epochs 0 evaluates on the validation data, and " + parse::printable(opts.data) +
                       " has none: pass --validation-data PATH");
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (opts.summary) {  // the built-in CNN's, for this data; device-free: no plugin loads
      std::fputs(train_app::model_for(opts, ds).model->summary(train_app::input_shape_of(ds)).c_str(), stdout);
      return 0;
    }
    // A model that does not fit the data (its input, its classes) is refused before anything is printed.
    train_app::model_for(opts, ds);
    // Weights that do not fit the model are refused before anything is printed.
    if (chief && opts.initial_weights) opts.initial_weights_bytes = train_app::read_initial_weights(opts, ds);

    Runtime& rt = Runtime::init(opts.config);
    if (!opts.quiet) {
      std::printf("Data: %s (loaded in %.2f s)\n", train_app::data_summary(ds).c_str(), load_s);
      if (!ds.class_names.empty()) std::printf("Classes: %s\n", train_app::class_list(ds.class_names).c_str());
    }

    // Before minutes of training: stdout must take what is printed.
    cli::check_stdout();

    try {
      if (!opts.compare.empty()) return train_app::run_compare(rt, opts, ds);

      if (multi_worker != nullptr && !multi_worker->workers().launched() && !opts.quiet)
        std::printf("multi-worker: not started by mpirun (no OMPI_COMM_WORLD_SIZE or PMIX_RANK in the "
                    "environment), so this process is the only worker; start several with "
                    "mpirun -np N axon-train --strategy multi-worker\n");
      TrainingStrategy strategy = make_strategy(rt, opts, multi_worker.get());
      train_app::train_on(strategy.placement(), opts, ds, chief,
                          chief && opts.tensorboard ? std::filesystem::path(*opts.tensorboard) : std::filesystem::path());
    } catch (const train_app::Stopped& stopped) {
      // Not an error: one line saying where to resume from, exit 128 + signal.
      if (chief) std::fprintf(stderr, "%s: %s\n", g_program, parse::one_line(stopped.message).c_str());
      stopped_by_signal = true;
      return stopped.exit_code;
    } catch (const train::TrainingDiverged& e) {
      // Every worker reads the same all-reduced loss and stops at the same
      // step: the chief alone says so (and ends the job, as after any
      // failure), the others leave quietly rather than race it to abort.
      if (chief) throw;
      quiet_exit = true;
      return 1;
    }
    if (opts.verbose) train_app::print_peak_rss(stdout);
    return 0;
  });
  // After a failure on one worker, end the whole job: the others would
  // otherwise wait for this one in their next collective.
  // A stop is agreed by every worker (and the chief may still be writing
  // its checkpoint): no abort then.
  if (code != 0 && !stopped_by_signal && !quiet_exit && multi_worker != nullptr && multi_worker->workers().launched())
    multi_worker->workers().abort(code);
  return code;
}
