#include "optimizer_flags.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace po = boost::program_options;

namespace axon::train_app {
namespace {

using nn::OptimizerKind;

// Each hyperparameter flag and the optimizers it applies to.
struct Flag {
  const char* name;
  std::vector<OptimizerKind> applies_to;
};

const std::vector<Flag>& flags() {
  using K = OptimizerKind;
  static const std::vector<Flag> f = {
      {"momentum", {K::sgd, K::rmsprop}},
      {"nesterov", {K::sgd}},
      {"rho", {K::rmsprop}},
      {"centered", {K::rmsprop}},
      {"epsilon", {K::rmsprop, K::adam, K::adamw, K::adagrad, K::nadam}},
      {"beta-1", {K::adam, K::adamw, K::nadam}},
      {"beta-2", {K::adam, K::adamw, K::nadam}},
      {"amsgrad", {K::adam, K::adamw}},
      {"initial-accumulator-value", {K::adagrad}},
  };
  return f;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

bool given(const po::variables_map& vm, const char* name) { return vm.count(name) != 0 && !vm[name].defaulted(); }

float value(const po::variables_map& vm, const char* name, bool ok, const char* range) {
  const float v = vm[name].as<float>();
  if (!ok || !std::isfinite(v)) throw UsageError(std::string("--") + name + " must be " + range + ", got " + number(v));
  return v;
}

}  // namespace

void add_optimizer_options(po::options_description& d) {
  d.add_options()
    ("optimizer", po::value<std::string>()->value_name("NAME")->default_value("adam"),
     "sgd, rmsprop, adam, adamw, adagrad or nadam: Keras 3's optimizer of that name, with its defaults")
    ("learning-rate", po::value<float>()->value_name("LR"),
     "the optimizer's learning rate (default: Keras', 0.01 for sgd and 0.001 for the others)")
    ("momentum", po::value<float>()->value_name("M"), "sgd, rmsprop: momentum in [0, 1] (default 0)")
    ("nesterov", po::bool_switch(), "sgd: Nesterov momentum")
    ("rho", po::value<float>()->value_name("R"), "rmsprop: the squared gradients' decay in [0, 1) (default 0.9)")
    ("centered", po::bool_switch(), "rmsprop: divide by the gradients' estimated variance, not their mean square")
    ("epsilon", po::value<float>()->value_name("E"),
     "rmsprop, adam, adamw, adagrad, nadam: epsilon > 0 (default 1e-07)")
    ("beta-1", po::value<float>()->value_name("B"), "adam, adamw, nadam: first moment decay in [0, 1) (default 0.9)")
    ("beta-2", po::value<float>()->value_name("B"),
     "adam, adamw, nadam: second moment decay in [0, 1) (default 0.999)")
    ("amsgrad", po::bool_switch(), "adam, adamw: AMSGrad (the largest second moment so far in the denominator)")
    ("initial-accumulator-value", po::value<float>()->value_name("A"),
     "adagrad: the accumulators' start, >= 0 (default 0.1)")
    ("weight-decay", po::value<float>()->value_name("WD"),
     "every optimizer: var -= var * WD * learning rate before each update, as Keras (default: none; adamw 0.004)")
    ("clipnorm", po::value<float>()->value_name("C"), "every optimizer: clip each weight's gradient to norm C")
    ("clipvalue", po::value<float>()->value_name("C"), "every optimizer: clip each gradient element to [-C, C]")
    ("global-clipnorm", po::value<float>()->value_name("C"),
     "every optimizer: scale all gradients to a global norm of at most C");
}

nn::OptimizerOptions parse_optimizer_options(const po::variables_map& vm, const std::optional<nn::OptimizerOptions>& base) {
  // A .keras file's optimizer unless --optimizer names one; its flags override the file's values.
  const bool from_file = base && !given(vm, "optimizer");
  const std::string name = from_file ? nn::optimizer_name(base->kind) : vm["optimizer"].as<std::string>();
  const std::optional<OptimizerKind> kind = nn::optimizer_from_name(name);
  if (!kind)
    throw UsageError("unknown optimizer '" + parse::printable(name) + "'; expected one of " + nn::optimizer_names());
  for (const Flag& f : flags()) {
    bool applies = false;
    for (OptimizerKind k : f.applies_to) applies = applies || k == *kind;
    if (applies || !given(vm, f.name)) continue;
    std::string to;
    for (OptimizerKind k : f.applies_to) (to += to.empty() ? "" : ", ") += nn::optimizer_name(k);
    throw UsageError(std::string("--") + f.name + " does not apply to --optimizer " + name + " (only to " + to + ")");
  }

  nn::OptimizerOptions o = from_file ? *base : nn::OptimizerOptions();
  o.kind = *kind;
  if (vm.count("learning-rate")) {
    const float lr = vm["learning-rate"].as<float>();
    o.learning_rate = value(vm, "learning-rate", lr > 0, "a positive number");
  }
  if (vm.count("momentum")) {
    const float m = vm["momentum"].as<float>();
    o.momentum = value(vm, "momentum", m >= 0 && m <= 1, "in [0, 1]");
  }
  o.nesterov = o.nesterov || vm["nesterov"].as<bool>();
  if (vm.count("rho")) {
    const float r = vm["rho"].as<float>();
    o.rho = value(vm, "rho", r >= 0 && r < 1, "in [0, 1)");
  }
  o.centered = o.centered || vm["centered"].as<bool>();
  if (vm.count("epsilon")) {
    const float e = vm["epsilon"].as<float>();
    o.epsilon = value(vm, "epsilon", e > 0, "a positive number");
  }
  for (const auto& [flag, field] : {std::pair{"beta-1", &o.beta_1}, std::pair{"beta-2", &o.beta_2}})
    if (vm.count(flag)) {
      const float b = vm[flag].as<float>();
      *field = value(vm, flag, b >= 0 && b < 1, "in [0, 1)");
    }
  o.amsgrad = o.amsgrad || vm["amsgrad"].as<bool>();
  if (vm.count("initial-accumulator-value")) {
    const float a = vm["initial-accumulator-value"].as<float>();
    o.initial_accumulator_value = value(vm, "initial-accumulator-value", a >= 0, "0 or more");
  }
  if (vm.count("weight-decay")) {
    const float w = vm["weight-decay"].as<float>();
    o.weight_decay = value(vm, "weight-decay", w >= 0, "0 or more");
  }
  int clips = 0;
  if (vm.count("clipnorm") || vm.count("clipvalue") || vm.count("global-clipnorm"))  // a flag replaces the file's clipping
    o.clipnorm = o.clipvalue = o.global_clipnorm = std::nullopt;
  for (const auto& [flag, field] : {std::pair{"clipnorm", &o.clipnorm}, std::pair{"clipvalue", &o.clipvalue},
                                    std::pair{"global-clipnorm", &o.global_clipnorm}})
    if (vm.count(flag)) {
      const float c = vm[flag].as<float>();
      *field = value(vm, flag, c > 0, "a positive number");
      ++clips;
    }
  if (clips > 1)
    throw UsageError("--clipnorm, --clipvalue and --global-clipnorm do not go together: give one");
  return o.keras();
}

}  // namespace axon::train_app
