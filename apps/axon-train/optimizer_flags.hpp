// axon-train's optimizer flags: --optimizer and Keras' hyperparameters, each
// refused (UsageError, exit 2) for an optimizer it does not apply to.
#pragma once

#include <axon/nn/optimizer.hpp>

#include <boost/program_options.hpp>

#include <optional>

namespace axon::train_app {

void add_optimizer_options(boost::program_options::options_description& d);
// The optimizer the flags give, Keras' defaults filled in (OptimizerOptions::keras()).
// `base`: a .keras file's optimizer, used unless --optimizer is given; the
// other flags then override its values.
nn::OptimizerOptions parse_optimizer_options(const boost::program_options::variables_map& vm,
                                             const std::optional<nn::OptimizerOptions>& base = std::nullopt);

}  // namespace axon::train_app
