#include "options.hpp"

#include "keras_flags.hpp"

#include "optimizer_flags.hpp"

#include <axon/cli.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/limits.hpp>
#include <axon/log.hpp>
#include <axon/nn/keras_compile_config.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/progress.hpp>
#include <axon/workers.hpp>

#include <boost/program_options.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace po = boost::program_options;

namespace axon::train_app {
namespace {

const char* const kExamples = R"(
Examples:
  axon-train                                   5 epochs of Fashion-MNIST on the best device
  axon-train --epochs 1 --batch-size 128 --metrics-csv run.csv --save model.axw
  axon-train --model cnn.json --save cnn.safetensors          a Keras model; weights Keras and NumPy read
  axon-train --initial-weights cnn.safetensors --epochs 0     evaluate saved weights on the test set
  axon-train --checkpoint-dir ckpt --checkpoint-every 200      checkpoints; after a kill, rerun with --resume
  axon-train --device cpu:0 --threads 2 --seed 7
  axon-train --optimizer sgd --learning-rate 0.05 --momentum 0.9 --nesterov    Keras' SGD
  axon-train --optimizer adamw --weight-decay 0.01 --global-clipnorm 1.0
  axon-train --data ~/mnist --train-limit 6000 --test-limit 1000 --quiet --metrics-csv m.csv
  axon-train --data ~/.keras/datasets/mnist.npz                  Keras' cached MNIST
  axon-train --data photos --image-size 64,64 --validation-split 0.2 --cache   a folder of class folders
  axon-train --compare cpu:0,gpu:0 --epochs 1   CPU vs GPU from the same initial weights
  axon-train --strategy mirrored --cpu-devices 2 --threads 2   2 replicas, gradients all-reduced
  mpirun -np 2 axon-train --strategy multi-worker              2 workers, one replica each
  AXON_VISIBLE_DEVICES=cpu:0 axon-train --verbose

Exit codes: 0 success, 1 runtime failure, 2 bad usage or bad input,
130/143 stopped by SIGINT/SIGTERM (after writing a checkpoint with --checkpoint-dir).
)";

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(start, comma - start);
    if (item.empty()) throw UsageError("--compare: empty device name in '" + parse::printable(s) + "'");
    out.push_back(item);
    start = comma + 1;
  }
  return out;
}

// --collective-timeout, else AXON_COLLECTIVE_TIMEOUT, else 300 s.
double collective_timeout(const po::variables_map& vm) {
  if (vm.count("collective-timeout")) {
    const double s = vm["collective-timeout"].as<double>();
    if (!(s >= 0) || !std::isfinite(s)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", s);
      throw UsageError(std::string("--collective-timeout must be 0 (no limit) or a positive number of seconds, got ") +
                       text);
    }
    return s;
  }
  const char* v = std::getenv("AXON_COLLECTIVE_TIMEOUT");
  if (v == nullptr || *v == '\0') return 300;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(s >= 0) || !std::isfinite(s))
    throw UsageError("AXON_COLLECTIVE_TIMEOUT='" + parse::printable(v) +
                     "' is not 0 (no limit) or a positive number of seconds");
  return s;
}

}  // namespace

// --lr-schedule and the callbacks, each checked now (a bad setting exits 2
// before any work).
void parse_keras_objects(const po::variables_map& vm, Options& o) {
  if (vm.count("lr-schedule")) {
    o.lr_schedule = vm["lr-schedule"].as<std::string>();
    schedule_from_flag(o.lr_schedule, o.learning_rate);
  }
  auto checked = [](const char* flag, auto make) {
    try {
      return make();
    } catch (const UsageError& e) {
      const std::string what = e.what();
      throw UsageError(what.starts_with(flag) ? what : std::string(flag) + ": " + what);
    }
  };
  if (vm.count("early-stopping"))
    o.early_stopping = checked("--early-stopping", [&] {
      const train::EarlyStoppingOptions es = early_stopping_from_flag(vm["early-stopping"].as<std::string>());
      train::EarlyStopping check(es);
      return es;
    });
  if (vm.count("reduce-lr-on-plateau"))
    o.reduce_lr = checked("--reduce-lr-on-plateau", [&] {
      const train::ReduceLROnPlateauOptions r = reduce_lr_from_flag(vm["reduce-lr-on-plateau"].as<std::string>());
      train::ReduceLROnPlateau check(r);
      return r;
    });
  if (vm.count("model-checkpoint"))
    o.model_checkpoint = checked("--model-checkpoint", [&] {
      const ModelCheckpointOptions m = model_checkpoint_from_flag(vm["model-checkpoint"].as<std::string>());
      train::BestModel check(m.best);
      return m;
    });
  if (o.reduce_lr && !o.lr_schedule.empty())
    throw UsageError("--reduce-lr-on-plateau and --lr-schedule both set the learning rate: choose one (Keras refuses "
                     "to set a scheduled rate too)");
  if (o.reduce_lr && !o.keras_schedule_json.empty())
    throw UsageError("--reduce-lr-on-plateau sets the learning rate, which " + *o.model_file +
                     "'s compile_config schedules: give --learning-rate to train at a constant rate instead");
}

void check_outputs(const Options& o) {
  if (o.save) train::check_output_file(*o.save, "--save");
  if (o.model_checkpoint) train::check_output_file(o.model_checkpoint->filepath, "--model-checkpoint filepath");
  if (o.metrics_csv) train::check_output_file(*o.metrics_csv, "--metrics-csv");
  if (o.save && o.metrics_csv && train::same_file(*o.save, *o.metrics_csv))
    throw UsageError("--save and --metrics-csv name the same file (" + parse::printable_path(*o.save) +
                     "): one would overwrite the other");
  if (o.tensorboard) train::prepare_output_dir(*o.tensorboard, "--tensorboard", "events.out.tfevents.0");
  if (!o.checkpoint_dir) return;
  for (const auto& [flag, file] : {std::pair{"--save", o.save}, std::pair{"--metrics-csv", o.metrics_csv}})
    if (file && train::same_file(*file, *o.checkpoint_dir))
      throw UsageError(std::string(flag) + " " + parse::printable_path(*file) + " is the --checkpoint-dir folder");
  train::prepare_checkpoint_dir(*o.checkpoint_dir);
}

std::optional<Options> parse_options(int argc, char** argv) {
  po::options_description training("Training");
  training.add_options()
    ("help,h", "show this help and exit")
    ("data", po::value<std::string>()->value_name("PATH")->default_value(data::kDefaultDataDir),
     "the training data: a folder of IDX files (train-/t10k-{images-idx3,labels-idx1}-ubyte[.gz]), a .npz in Keras' "
     "mnist.npz layout (x_train, y_train, x_test, y_test), IMAGES.npy,LABELS.npy, or a folder of class folders of "
     "images (PNG, JPEG, BMP, GIF) as Keras' image_dataset_from_directory reads it")
    ("validation-data", po::value<std::string>()->value_name("PATH"),
     "validate on PATH (the same kinds as --data) instead of the data's own test split")
    ("validation-split", po::value<double>()->value_name("F"),
     "validate on the fraction F of an image folder's files, chosen with --seed as Keras does (0 < F < 1)")
    ("image-size", po::value<std::string>()->value_name("H,W"),
     "resize an image folder's images to H x W (TensorFlow's bilinear resize); default: the model's input, "
     "which every image must then have")
    ("color-mode", po::value<std::string>()->value_name("MODE"),
     "grayscale, rgb or rgba: the channels an image folder's images are decoded to; default: the model's input "
     "channels (the built-in CNN: grayscale when the first image is gray, else rgb)")
    ("cache", po::bool_switch(), "keep an image folder's decoded images in memory after their first epoch")
    ("epochs", po::value<int>()->value_name("N")->default_value(5),
     "passes over the training set (0 with --initial-weights: only evaluate on the test set)")
    ("model", po::value<std::string>()->value_name("FILE"),
     "train the Keras model of FILE instead of the built-in CNN: model.to_json() (a Sequential or a functional "
     "Model), or a .keras file from model.save() (its weights too)")
    ("initial-weights", po::value<std::string>()->value_name("FILE"),
     "start from the weights of FILE (.safetensors, a Keras .keras, or axon's .axw) instead of random ones")
    ("batch-size", po::value<int64_t>()->value_name("N")->default_value(64), "samples per step (the global batch)")
    ("seed", po::value<int64_t>()->value_name("N")->default_value(42),
     "seeds the initial weights and the shuffle order: same seed and threads give the same run")
    ("device", po::value<std::string>()->value_name("DEV"),
     "train on DEV (cpu:0, gpu:0, /device:GPU:1); default: the highest-priority visible device")
    ("strategy", po::value<std::string>()->value_name("NAME")->default_value("default"),
     "distribution strategy: default (one device); mirrored (a replica on every visible device of the "
     "best type, or on each device of --visible-devices); multi-worker (one worker per process started "
     "by mpirun, each mirroring over its devices). --batch-size is the global batch")
    ("collective-timeout", po::value<double>()->value_name("S"),
     "seconds a collective may take before the job fails (default 300, or AXON_COLLECTIVE_TIMEOUT; 0: no limit)")
    ("all-reduce-bucket-mb", po::value<double>()->value_name("MB")->default_value(25),
     "sum the gradients over the replicas in buckets of about MB MiB, in reverse layer order, each as soon as "
     "backward has written it, while backward goes on (PyTorch DDP's bucket_cap_mb; CPU replicas); 0: one "
     "all-reduce after backward")
    ("compare", po::value<std::string>()->value_name("LIST"),
     "train the same model from the same initial weights on each device of LIST (cpu:0,gpu:0) and "
     "print a table of time per epoch, samples/s, final accuracy and speedup")
    ("metrics-csv", po::value<std::string>()->value_name("FILE"), "write one row per epoch (atomically) to FILE")
    ("save", po::value<std::string>()->value_name("FILE"), "save the trained weights (atomically) to FILE")
    ("loss", po::value<std::string>()->value_name("NAME:K=V,..."),
     "Keras' loss (default sparse_categorical_crossentropy; from_logits=true unless given): "
     "sparse_categorical_crossentropy, categorical_crossentropy (one-hot targets; label_smoothing), "
     "binary_crossentropy (1 output unit, labels 0 and 1; label_smoothing), mean_squared_error, "
     "mean_absolute_error, huber (delta), by these names or Keras' class names, e.g. "
     "categorical_crossentropy:label_smoothing=0.1. Overrides a .keras file's loss")
    ("metrics", po::value<std::vector<std::string>>()->composing()->value_name("NAME[:K=V,...]"),
     "a Keras metric besides accuracy (always reported), logged as Keras logs it: mse, mae, "
     "top_k_categorical_accuracy, sparse_top_k_categorical_accuracy (k, default 5), by these names or Keras' "
     "aliases; name=N renames one. Repeat the flag for more, or list plain names: --metrics mse,mae. "
     "Overrides a .keras file's metrics")
    ("lr-schedule", po::value<std::string>()->value_name("NAME:K=V,..."),
     "Keras' learning-rate schedule from the optimizer's rate, set before every step: exponential, piecewise, "
     "polynomial, inverse_time, cosine, cosine_restarts with Keras' arguments, e.g. "
     "cosine:decay_steps=5000,warmup_steps=500,warmup_target=0.01")
    ("early-stopping", po::value<std::string>()->value_name("K=V,..."),
     "Keras' EarlyStopping: monitor, min_delta, patience, mode, baseline, restore_best_weights, start_from_epoch "
     "(e.g. monitor=val_loss,patience=3,restore_best_weights=true; 'none': Keras' defaults)")
    ("reduce-lr-on-plateau", po::value<std::string>()->value_name("K=V,..."),
     "Keras' ReduceLROnPlateau: monitor, factor, patience, mode, min_delta, cooldown, min_lr (e.g. factor=0.5,patience=2)")
    ("model-checkpoint", po::value<std::string>()->value_name("K=V,..."),
     "Keras' ModelCheckpoint: filepath (the weights file, written as --save writes), monitor, mode, "
     "save_best_only (default true), initial_value_threshold (e.g. filepath=best.safetensors,monitor=val_accuracy)")
    ("tensorboard", po::value<std::string>()->value_name("DIR"),
     "write TensorBoard event files into DIR (made if only it is missing): scalars per epoch, and every "
     "--tensorboard-every steps; with --compare one run per device, DIR/<device>")
    ("tensorboard-every", po::value<int64_t>()->value_name("N")->default_value(0),
     "also write the running loss, accuracy and samples/s every N steps (0: per epoch only)")
    ("checkpoint-dir", po::value<std::string>()->value_name("DIR"),
     "write a checkpoint (weights, optimizer state, epoch, step, data order) into DIR at the end of every epoch, "
     "every --checkpoint-every steps and on SIGINT/SIGTERM, keeping the last --keep-checkpoints")
    ("checkpoint-every", po::value<int64_t>()->value_name("N")->default_value(0),
     "also write a checkpoint every N steps (0: at epoch ends only)")
    ("keep-checkpoints", po::value<int>()->value_name("K")->default_value(3), "checkpoints kept in --checkpoint-dir")
    ("resume", po::bool_switch(),
     "continue from the newest valid checkpoint in --checkpoint-dir (from the start when there is none)")
    ("train-limit", po::value<int64_t>()->value_name("N")->default_value(0), "train on the first N samples only (0: all)")
    ("test-limit", po::value<int64_t>()->value_name("N")->default_value(0),
     "validate on the first N validation samples only (0: all)")
    ("no-prefetch", po::bool_switch(), "prepare each batch when it is needed instead of in the background")
    ("profile", po::bool_switch(), "print where the time goes, per op (synchronises after every op)")
    ("dry-run", po::bool_switch(),
     "place one training step without running it: print every op with its dtype, layer and device, each "
     "fallback (and what moves along with a fused op), and every kernel the device lacks; then exit")
    ("summary", po::bool_switch(), "print the model's Keras-style summary (layers, output shapes, parameters) and exit")
    ("layer-table", po::bool_switch(), "print the Keras layers axon reads, with their settings (Markdown), and exit")
    ("quiet,q", po::bool_switch(), "print nothing but warnings and errors")
    ("verbose,v", po::bool_switch(), "also print the model summary and device memory in use/peak/reserved");
  po::options_description optimizer("Optimizer (Keras 3's, with its defaults)");
  add_optimizer_options(optimizer);
  po::options_description devices("Devices");
  cli::add_device_options(devices);
  po::options_description all("Usage: axon-train [options]\n\nTrains a small CNN (or a Keras model) on IDX files, NumPy arrays or a folder of images, Keras style");
  all.add(training).add(optimizer).add(devices);

  const po::variables_map vm = cli::parse_command_line(argc, argv, all);
  if (vm.count("help")) {
    std::cout << all << kExamples;
    return std::nullopt;
  }

  Options o;
  o.data = vm["data"].as<std::string>();
  if (vm.count("validation-data")) o.validation_data = vm["validation-data"].as<std::string>();
  if (vm.count("validation-split")) {
    o.validation_split = vm["validation-split"].as<double>();
    if (!(o.validation_split > 0 && o.validation_split < 1)) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", o.validation_split);
      throw UsageError(std::string("--validation-split must be between 0 and 1 (exclusive), got ") + text);
    }
  }
  if (vm.count("image-size")) cli::parse_image_size(vm["image-size"].as<std::string>(), o.image_rows, o.image_cols);
  if (vm.count("color-mode")) o.channels = cli::parse_color_mode(vm["color-mode"].as<std::string>());
  o.cache = vm["cache"].as<bool>();
  o.epochs = vm["epochs"].as<int>();
  if (vm.count("initial-weights")) o.initial_weights = vm["initial-weights"].as<std::string>();
  if (vm.count("model")) {
    o.model_file = vm["model"].as<std::string>();
    if (train::is_keras_file(*o.model_file)) {
      // Keras' model.save(): the model from config.json, the weights from
      // model.weights.h5 unless --initial-weights names others.
      o.model_json = train::read_keras_config(*o.model_file);
      if (!o.initial_weights) {
        o.initial_weights = o.model_file;
        o.weights_from_model_file = true;
      }
    } else {
      o.model_json = io::read_regular_file(*o.model_file, limits::kMaxModelJsonBytes, "--model file");
    }
    nn::model_from_keras_json(o.model_json, *o.model_file);  // every error before any work
  }
  if (o.epochs < 0 || (o.epochs == 0 && !o.initial_weights))
    throw UsageError("--epochs must be at least 1 (or 0 with --initial-weights or a .keras model, to evaluate), got " +
                     std::to_string(o.epochs));
  o.batch_size = vm["batch-size"].as<int64_t>();
  if (o.batch_size < 1) throw UsageError("--batch-size must be at least 1, got " + std::to_string(o.batch_size));
  if (o.batch_size > limits::kMaxBatchSize)
    throw UsageError("--batch-size " + std::to_string(o.batch_size) + " is above the limit of " +
                     std::to_string(limits::kMaxBatchSize));
  nn::KerasCompileConfig compiled;
  if (o.model_file && train::is_keras_file(*o.model_file))
    compiled = nn::read_compile_config(o.model_json, *o.model_file);
  o.optimizer = parse_optimizer_options(vm, compiled.optimizer);
  if (vm.count("loss")) o.loss = loss_from_flag(vm["loss"].as<std::string>());
  else if (compiled.loss) o.loss = *compiled.loss;
  if (vm.count("metrics")) o.metrics = metrics_from_flags(vm["metrics"].as<std::vector<std::string>>());
  else o.metrics = compiled.metrics;
  o.optimizer_from_model_file = o.weights_from_model_file && compiled.optimizer &&
                                nn::make_optimizer(o.optimizer)->describe() ==
                                    nn::make_optimizer(*compiled.optimizer)->describe();
  o.learning_rate = *o.optimizer.learning_rate;
  // The file's schedule, unless the flags give the rate or a schedule of their own.
  if (!compiled.schedule_json.empty() && !vm.count("learning-rate") && !vm.count("lr-schedule") &&
      (!vm.count("optimizer") || vm["optimizer"].defaulted()))
    o.keras_schedule_json = compiled.schedule_json;
  parse_keras_objects(vm, o);
  const int64_t seed = vm["seed"].as<int64_t>();
  if (seed < 0) throw UsageError("--seed must be 0 or more, got " + std::to_string(seed));
  o.seed = static_cast<uint64_t>(seed);
  if (vm.count("device")) o.device = vm["device"].as<std::string>();
  o.strategy = vm["strategy"].as<std::string>();
  if (o.strategy != "default" && o.strategy != "mirrored" && o.strategy != "multi-worker")
    throw UsageError("unknown strategy '" + parse::printable(o.strategy) +
                     "'; expected default, mirrored or multi-worker");
  if (o.strategy != "default" && o.device)
    throw UsageError("--device and --strategy " + o.strategy + " do not go together: the strategy uses every "
                     "visible device of the best type; choose them with --visible-devices");
  o.collective_timeout_s = collective_timeout(vm);
  const double bucket_mb = vm["all-reduce-bucket-mb"].as<double>();
  if (!(bucket_mb >= 0) || bucket_mb > 1e6) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", bucket_mb);
    throw UsageError(std::string("--all-reduce-bucket-mb must be 0 (one all-reduce after backward) or a positive "
                                 "size in MiB up to 1e6, got ") + text);
  }
  o.all_reduce_bucket_bytes = static_cast<int64_t>(bucket_mb * (1 << 20));
  if (vm.count("compare")) {
    if (o.device) throw UsageError("--compare and --device do not go together: --compare names its devices");
    if (o.strategy != "default")
      throw UsageError("--compare trains on one device at a time: it does not go with --strategy " + o.strategy);
    o.compare = split_list(vm["compare"].as<std::string>());
    if (vm.count("metrics-csv") || vm.count("save") || vm.count("checkpoint-dir"))
      throw UsageError("--compare trains several models: it writes neither --metrics-csv, --save nor checkpoints");
  }
  if (vm.count("metrics-csv")) o.metrics_csv = vm["metrics-csv"].as<std::string>();
  if (vm.count("save")) o.save = vm["save"].as<std::string>();
  if (vm.count("checkpoint-dir")) o.checkpoint_dir = vm["checkpoint-dir"].as<std::string>();
  o.checkpoint_every = vm["checkpoint-every"].as<int64_t>();
  o.keep_checkpoints = vm["keep-checkpoints"].as<int>();
  o.resume = vm["resume"].as<bool>();
  if (o.checkpoint_every < 0)
    throw UsageError("--checkpoint-every must be 0 (epoch ends only) or more steps, got " +
                     std::to_string(o.checkpoint_every));
  if (o.keep_checkpoints < 1 || o.keep_checkpoints > train::kMaxKeptCheckpoints)
    throw UsageError("--keep-checkpoints must be from 1 to " + std::to_string(train::kMaxKeptCheckpoints) + ", got " +
                     std::to_string(o.keep_checkpoints));
  if (vm.count("tensorboard")) o.tensorboard = vm["tensorboard"].as<std::string>();
  o.tensorboard_every = vm["tensorboard-every"].as<int64_t>();
  if (o.tensorboard_every < 0)
    throw UsageError("--tensorboard-every must be 0 (per epoch only) or more steps, got " +
                     std::to_string(o.tensorboard_every));
  if (!o.tensorboard && !vm["tensorboard-every"].defaulted()) throw UsageError("--tensorboard-every needs --tensorboard DIR");
  if (o.initial_weights && !o.weights_from_model_file && o.resume)
    throw UsageError("--initial-weights and --resume do not go together: a checkpoint holds the weights");
  if (o.epochs == 0 && (o.checkpoint_dir || o.metrics_csv || o.tensorboard || !o.compare.empty() ||
                        o.model_checkpoint || o.early_stopping || o.reduce_lr || !o.lr_schedule.empty()))
    throw UsageError("--epochs 0 only evaluates: it writes no checkpoints, --metrics-csv, --tensorboard or "
                     "--model-checkpoint, does not --compare and needs no schedule or training callbacks");
  if (!o.checkpoint_dir)
    for (const char* flag : {"resume", "checkpoint-every", "keep-checkpoints"})
      if (!vm[flag].defaulted()) throw UsageError(std::string("--") + flag + " needs --checkpoint-dir DIR");
  o.train_limit = vm["train-limit"].as<int64_t>();
  o.test_limit = vm["test-limit"].as<int64_t>();
  if (o.train_limit < 0) throw UsageError("--train-limit must be 0 (all) or more, got " + std::to_string(o.train_limit));
  if (o.test_limit < 0) throw UsageError("--test-limit must be 0 (all) or more, got " + std::to_string(o.test_limit));
  o.prefetch = !vm["no-prefetch"].as<bool>();
  o.profile = vm["profile"].as<bool>();
  o.dry_run = vm["dry-run"].as<bool>();
  o.summary = vm["summary"].as<bool>();
  o.layer_table = vm["layer-table"].as<bool>();
  o.redraw_progress = train::redraw_progress();
  o.quiet = vm["quiet"].as<bool>();
  o.verbose = vm["verbose"].as<bool>();
  if (o.quiet && o.verbose) throw UsageError("--quiet and --verbose contradict each other");
  o.config = cli::make_config(vm);
  return o;
}

}  // namespace axon::train_app
