// One training run of the trainer's model under a distribution strategy.
#pragma once

#include "options.hpp"
#include "report.hpp"

#include <axon/data/mnist.hpp>
#include <axon/strategy.hpp>

namespace axon::train_app {

// Builds the model from opts.seed under `strategy`, trains it with the
// progress output (unless quiet), writes --metrics-csv and --save when
// `write_files`.
RunResult train_on(Strategy& strategy, const Options& opts, const data::ImageDataset& ds, bool write_files);

}  // namespace axon::train_app
