// axon-train's flags (docs/training.md has the table) and their validation.
#pragma once

#include "keras_flags.hpp"

#include <axon/config.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/strategy.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace axon::train_app {

struct Options {
  std::string data;                            // --data: an IDX folder, a .npz, IMAGES.npy,LABELS.npy
  std::optional<std::string> validation_data;  // --validation-data
  int64_t image_rows = 0, image_cols = 0;      // --image-size H,W (0: none)
  int channels = 0;                            // --color-mode: 1, 3, 4 (0: none)
  double validation_split = 0;                 // --validation-split
  bool cache = false;                          // --cache
  int epochs = 5;
  int64_t batch_size = 64;
  nn::OptimizerOptions optimizer = nn::OptimizerOptions().keras();  // --optimizer and its flags
  float learning_rate = 1e-3f;                                      // the optimizer's (Keras' default filled in)
  nn::LossOptions loss;  // --loss, else a .keras file's, else SparseCategoricalCrossentropy(from_logits=True)
  std::vector<nn::MetricOptions> metrics;  // --metrics, else a .keras file's (besides accuracy)
  uint64_t seed = 42;
  std::optional<std::string> device;
  std::string strategy = "default";       // default, mirrored, multi-worker
  double collective_timeout_s = 300;      // --collective-timeout, AXON_COLLECTIVE_TIMEOUT; 0: no limit
  int64_t all_reduce_bucket_bytes = Strategy::kDefaultBucketBytes;  // --all-reduce-bucket-mb; 0: after backward
  std::vector<std::string> compare;  // device names, in order
  std::optional<std::string> metrics_csv, save;
  std::optional<std::string> model_file;       // --model: a Keras model JSON
  std::string model_json;                      // its text
  std::optional<std::string> initial_weights;  // --initial-weights, or the --model .keras file
  bool weights_from_model_file = false;
  // The .keras model file's optimizer (no flag changed it): its saved state is restored too.
  bool optimizer_from_model_file = false;
  std::string lr_schedule;                                        // --lr-schedule (empty: none)
  std::string keras_schedule_json;  // a .keras file's schedule (Keras' serialised form), when no flag replaces it
  std::optional<train::EarlyStoppingOptions> early_stopping;      // --early-stopping
  std::optional<train::ReduceLROnPlateauOptions> reduce_lr;       // --reduce-lr-on-plateau
  std::optional<ModelCheckpointOptions> model_checkpoint;         // --model-checkpoint        // initial_weights is the .keras --model (a checkpoint may override)
  std::string initial_weights_bytes;           // its bytes, read by the chief before any work
  std::optional<std::string> tensorboard;      // --tensorboard: the log folder
  int64_t tensorboard_every = 0;               // steps; 0: per epoch only
  std::optional<std::string> checkpoint_dir;  // --checkpoint-dir
  int64_t checkpoint_every = 0;               // steps; 0: at the end of each epoch only
  int keep_checkpoints = 3;
  bool resume = false;
  int64_t train_limit = 0, test_limit = 0;  // 0: all
  bool quiet = false, verbose = false, profile = false, prefetch = true;
  bool dry_run = false;  // --dry-run: print one step's placement, train nothing
  bool summary = false;          // --summary: print the model's summary, train nothing
  bool layer_table = false;      // --layer-table: print the supported Keras layers
  bool redraw_progress = false;  // the bar redrawn in place, not a line per epoch (train::redraw_progress())
  Config config;
};

// Parses argv. Returns nullopt after printing --help. Throws UsageError for
// bad flags or values (cli::parse_command_line's, and its own).
std::optional<Options> parse_options(int argc, char** argv);

// UsageError unless --save and --metrics-csv can be written (distinct
// regular files in writable folders) and --checkpoint-dir is a writable
// folder (made when only it is missing): checked before training rather than
// after its minutes of work, by the one worker that writes them.
void check_outputs(const Options& o);

}  // namespace axon::train_app
