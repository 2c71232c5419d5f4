// One training run of the trainer's model under a distribution strategy.
#pragma once

#include "options.hpp"
#include "report.hpp"

#include <axon/data/dataset.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/strategy.hpp>

#include <filesystem>
#include <string>

namespace axon::train_app {

// Thrown when SIGINT or SIGTERM stopped training: main prints `message` (one
// line saying where the run can resume from) and exits with `exit_code`
// (128 + the signal: 130, 143).
struct Stopped {
  int exit_code = 0;
  std::string message;
};

// The per-sample shape of the data's images: [rows, cols, channels].
Shape input_shape_of(const data::Dataset& ds);

// The Keras JSON of the model --model describes, else of the built-in CNN
// (as many classes as the data needs, at least 10) for the data's images.
std::string model_json_for(const Options& opts, const data::Dataset& ds);

// The model --model describes, else the built-in CNN (with as many classes as
// the data needs, at least 10), for the data's images: unbuilt, with its
// weights' names and shapes. UsageError when its input is not the data's
// images or a label is outside its classes (naming the label and where it is).
nn::KerasModel model_for(const Options& opts, const data::Dataset& ds);

// The --initial-weights file's bytes, checked against the model's weights
// (names, shapes, dtype; the file's structure) before any work is done.
std::string read_initial_weights(const Options& opts, const data::Dataset& ds);

// Where a run trains: a distribution strategy (mirrored, multi-worker), else
// one device, as TensorFlow's default strategy does (the model is built in
// an axon::device scope and trains on that device alone).
struct Placement {
  Strategy* strategy = nullptr;
  Device* device = nullptr;
};

// Builds the model from opts.seed where `where` says (or resumes it from
// --checkpoint-dir), trains it with the progress output (unless quiet),
// writes --metrics-csv, checkpoints and --save when `write_files`, and
// TensorBoard events into `tensorboard_dir` when it is not empty.
RunResult train_on(const Placement& where, const Options& opts, const data::Dataset& ds, bool write_files,
                   const std::filesystem::path& tensorboard_dir = {});

}  // namespace axon::train_app
