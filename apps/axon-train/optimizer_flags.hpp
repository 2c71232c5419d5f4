// axon-train's optimizer flags: --optimizer and Keras' hyperparameters, each
// refused (UsageError, exit 2) for an optimizer it does not apply to.
#pragma once

#include <axon/nn/optimizer.hpp>

#include <boost/program_options.hpp>

namespace axon::train_app {

void add_optimizer_options(boost::program_options::options_description& d);
// The optimizer the flags give, Keras' defaults filled in (OptimizerOptions::keras()).
nn::OptimizerOptions parse_optimizer_options(const boost::program_options::variables_map& vm);

}  // namespace axon::train_app
