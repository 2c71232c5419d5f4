// --compare cpu:0,gpu:0: the same model from the same initial weights on each
// device in turn, then a table of time per epoch, samples/s, final accuracy
// and speedup over the first. Devices that are not there are said and skipped.
#pragma once

#include "options.hpp"

#include <axon/data/dataset.hpp>
#include <axon/runtime.hpp>

namespace axon::train_app {

int run_compare(const Runtime& rt, const Options& opts, const data::Dataset& ds);

}  // namespace axon::train_app
