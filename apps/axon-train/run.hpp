// One training run of the trainer's model on one device.
#pragma once

#include "options.hpp"
#include "report.hpp"

#include <axon/data/mnist.hpp>
#include <axon/device.hpp>

namespace axon::train_app {

// Builds the model from opts.seed on `device`, trains it with the progress
// output (unless quiet), writes --metrics-csv and --save when `write_files`.
RunResult train_on(Device& device, const Options& opts, const data::ImageDataset& ds, bool write_files);

}  // namespace axon::train_app
