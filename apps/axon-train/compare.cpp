#include "compare.hpp"

#include "device_choice.hpp"
#include "run.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cstdio>
#include <memory>

namespace axon::train_app {
namespace {

// "/device:GPU:0" -> "GPU_0": a folder name TensorBoard shows as the run.
std::string tensorboard_run_name(const Device& d) {
  std::string name = d.name();
  if (name.rfind("/device:", 0) == 0) name = name.substr(8);
  for (char& c : name)
    if (c == ':' || c == '/') c = '_';
  return name;
}

}  // namespace

int run_compare(const Runtime& rt, const Options& opts, const data::Dataset& ds) {
  std::vector<Device*> devices;
  for (const std::string& name : opts.compare) {
    const DeviceSpec spec = parse_device_spec(name);
    Device* d = rt.find_device(name);
    if (d == nullptr) {
      if (auto failed = rt.failed_plugin(spec.type))
        throw UsageError("--compare " + parse::printable(name) + ": " + *failed);
      if (rt.config().strict_placement)
        throw UsageError("--compare: " + spec.canonical() + " is not available (" + rt.why_no_device(spec.type) +
                         "); devices: " + device_list(rt));
      if (rt.count(spec.type) == 0)
        std::printf("No %s on this machine (%s): skipping %s\n", spec.type.c_str(), rt.why_no_device(spec.type).c_str(),
                    spec.canonical().c_str());
      else
        std::printf("%s is not available (%s): skipping it\n", spec.canonical().c_str(),
                    rt.why_no_device(spec.type).c_str());
      continue;
    }
    for (Device* seen : devices)
      if (seen == d) throw UsageError("--compare names " + d->name() + " twice");
    start_device(*d, "--compare " + parse::printable(name));
    devices.push_back(d);
  }
  if (devices.empty()) throw UsageError("--compare: none of the devices named is available; devices: " + device_list(rt));
  if (devices.size() == 1) std::printf("Only %s is available: running it alone\n", devices.front()->name().c_str());

  std::vector<RunResult> runs;
  for (Device* d : devices) {
    if (!opts.quiet) std::printf("\n== %s (%s) ==\n", d->name().c_str(), d->props().name);
    std::fflush(stdout);
    // TensorBoard: one run per device, DIR/CPU_0, DIR/GPU_0.
    std::filesystem::path tensorboard;
    if (opts.tensorboard) tensorboard = std::filesystem::path(*opts.tensorboard) / tensorboard_run_name(*d);
    runs.push_back(train_on({.device = d}, opts, ds, false, tensorboard));
  }
  print_compare_table(stdout, runs);
  if (opts.verbose) print_peak_rss(stdout);
  return 0;
}

}  // namespace axon::train_app
