// axon-plugin-check PLUGIN.so: a plugin author's conformance check. Loads the
// file through axon's own loader, then checks its device against the
// reference kernels compiled in (every op and dtype it declares), its refusal
// of malformed calls (in a child process, so that a crash fails one check and
// the rest go on), its allocator and copies, and a short training run
// against the CPU. One line per check and a summary, or --json; exit 0 when
// nothing failed, 1 when something did, 2 for bad usage. docs/plugin-check.md.
#include "device_checks.hpp"
#include "kernel_checks.hpp"
#include "loading.hpp"
#include "probes.hpp"
#include "report.hpp"
#include "supervisor.hpp"
#include <axon/tolerance.hpp>
#include "training.hpp"

#include <axon/cli.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/op_table.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
namespace po = boost::program_options;
using namespace axon::plugin_check;

namespace {

std::string program_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw axon::RuntimeError("cannot find this program's file (/proc/self/exe): " + ec.message());
  return p.string();
}

struct Options {
  std::string file;
  int device = 0;
  std::string op;
  bool json = false, no_train = false, allow_insecure = false;
  std::string data = axon::data::kDefaultDataDir;
  double sum_ulps = axon::tol::kSumUlps;
};

// Parses the command line; nullopt after --help. Throws UsageError.
std::optional<Options> parse(int argc, char** argv) {
  po::options_description flags("axon-plugin-check options");
  flags.add_options()
    ("help,h", "show this help and exit")
    ("device", po::value<int>()->value_name("N"), "check the plugin's device N (default 0)")
    ("op", po::value<std::string>()->value_name("NAME"), "check only this op's kernels and bad input (e.g. Conv2D)")
    ("json", "print one JSON document instead of the lines")
    ("data", po::value<std::string>()->value_name("DIR"),
     (std::string("the data set of the training run [") + axon::data::kDefaultDataDir + "]").c_str())
    ("no-train", "leave out the training run")
    ("sum-ulps", po::value<double>()->value_name("U"),
     "the bound on sums of products, in units of 2^-24 times the sum of magnitudes [16]; axon's GPU tests allow 64")
    ("allow-insecure-plugin-path", "load the plugin even from a world-writable file or folder");
  po::options_description hidden;
  hidden.add_options()("plugin", po::value<std::vector<std::string>>());
  po::options_description all;
  all.add(flags).add(hidden);
  po::positional_options_description positional;
  positional.add("plugin", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << "Usage: axon-plugin-check [options] PLUGIN.so\n\n"
                 "Checks an axon backend plugin: loading, every kernel it declares against the reference kernels, "
                 "bad input, memory, copies and a short training run against the CPU.\n\n"
              << flags << "\nExit: 0 all passed, 1 a check failed, 2 bad usage. Details: docs/plugin-check.md\n";
    return std::nullopt;
  }
  Options o;
  if (!vm.count("plugin")) throw axon::UsageError("no plugin file given (usage: axon-plugin-check [options] PLUGIN.so)");
  const auto& files = vm["plugin"].as<std::vector<std::string>>();
  if (files.size() != 1) throw axon::UsageError("one plugin file at a time, got " + std::to_string(files.size()));
  std::error_code ec;
  const fs::file_status st = fs::status(files[0], ec);
  if (!fs::exists(st)) throw axon::UsageError(files[0] + ": no such file");
  if (!fs::is_regular_file(st)) throw axon::UsageError(files[0] + " is not a file");
  o.file = fs::absolute(files[0]).lexically_normal().string();
  if (vm.count("device")) o.device = vm["device"].as<int>();
  if (o.device < 0) throw axon::UsageError("--device must be 0 or more, got " + std::to_string(o.device));
  if (vm.count("op")) {
    o.op = vm["op"].as<std::string>();
    if (axon::find_op(o.op) == nullptr) throw axon::UsageError("--op " + o.op + ": no such op in the op table");
  }
  if (vm.count("sum-ulps")) {
    o.sum_ulps = vm["sum-ulps"].as<double>();
    if (!(o.sum_ulps > 0)) throw axon::UsageError("--sum-ulps must be above 0");
  }
  if (vm.count("data")) o.data = vm["data"].as<std::string>();
  o.json = vm.count("json") > 0;
  o.no_train = vm.count("no-train") > 0;
  o.allow_insecure = vm.count("allow-insecure-plugin-path") > 0;
  return o;
}

int check(const Options& o) {
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Report report(o.json);
  report.facts.path = o.file;
  auto done = [&] {
    report.finish(seconds());
    return report.count(Status::fail) > 0 ? 1 : 0;
  };
  const std::string load_name = "load " + fs::path(o.file).filename().string();
  if (!plugin_file_name(o.file)) {
    report.fail(load_name, "axon loads only files named libaxon-plugin-<name>.so; rename it");
    return done();
  }

  // A worker loads it first: a plugin that crashes while loading fails the
  // check instead of ending the checker.
  LoadSettings load;
  load.file = o.file;
  load.device = o.device;
  load.allow_insecure = o.allow_insecure;
  WorkerArgs worker;
  worker.load = load;
  worker.op = o.op;
  const std::string self = program_path();
  ProbeSupervisor probes(self, worker);
  if (std::optional<std::string> died = probes.start()) {
    report.fail(load_name, *died);
    return done();
  }

  std::string why;
  const std::optional<Loaded> loaded = load_plugin(load, &why);
  if (!loaded) {
    report.fail(load_name, why);
    return done();
  }
  const axon::PluginInfo& info = loaded->info;
  PluginFacts& f = report.facts;
  f.loaded = true;
  f.name = info.name;
  f.version = info.version;
  f.device_type = info.device_type;
  f.device_count = info.device_count;
  f.unavailable_reason = info.unavailable_reason;
  for (const axon::ExcludedDevice& e : loaded->excluded) f.excluded.push_back(e.name + ": " + e.reason);
  report.pass(load_name, "plugin " + info.name + " " + info.version + ", device type " + info.device_type + ", " +
                             std::to_string(info.device_count) + " device(s)");
  if (loaded->device == nullptr) {
    std::string reason = info.unavailable_reason.empty() ? "no reason given" : info.unavailable_reason;
    for (const std::string& e : f.excluded) reason += "; excluded " + e;
    report.fail("devices", "plugin " + info.name + " offers no device: " + reason);
    return done();
  }
  axon::Device& device = *loaded->device;
  f.device = device.name();
  const std::string open_name = std::string("open ") + device.name();
  const axon_device_api* api = nullptr;
  try {
    api = &device.api();
  } catch (const std::exception& e) {
    report.fail(open_name, e.what());
    return done();
  }
  report.pass(open_name, device.props().name);

  if (o.op.empty()) {
    check_list_ops(*api, report);
    check_allocator(*api, report);
    check_copies(*api, report);
    check_events(*api, report);
  }
  check_kernels(*api, o.op, o.sum_ulps, report);

  const AsyncSummary async = probes.collect(report);
  const char* async_name = "asynchronous errors surface by synchronize()";
  if (!async.lost.empty()) {
    std::string list;
    for (const std::string& l : async.lost) list += (list.empty() ? "" : ", ") + l;
    report.fail(async_name, "bad input accepted by the kernel call and never reported, synchronize() returned AXON_OK: " +
                                list);
  } else if (async.bad_inputs > 0) {
    report.pass(async_name, std::to_string(async.by_synchronize + async.by_event) + " of " +
                                std::to_string(async.bad_inputs) + " bad inputs reported after the call (" +
                                std::to_string(async.by_event) + " by an event), the others by the kernel call");
  }
  const char* event_name = "asynchronous errors surface through an event";
  if (api->event_create == nullptr) {
    report.skip(event_name, "no events");
  } else if (!async.lost_by_events.empty()) {
    std::string list;
    for (const std::string& l : async.lost_by_events) list += (list.empty() ? "" : ", ") + l;
    report.fail(event_name, "synchronize() reported the bad input, event_synchronize() on an event recorded after "
                            "the call returned AXON_OK: " + list);
  } else if (async.bad_inputs > 0) {
    report.pass(event_name, std::to_string(async.by_event) + " bad inputs reported by an event after the call");
  }

  if (!o.op.empty()) return done();
  if (o.no_train) {
    report.skip("training: " + device.name() + " against /device:CPU:0", "--no-train");
    return done();
  }
  TrainSettings t;
  t.program_dir = fs::path(self).parent_path().string();
  t.plugin_file = o.file;
  t.device_type = device.type();
  t.device_index = device.index();
  t.data_dir = o.data;
  check_training(t, report);
  return done();
}

}  // namespace

int main(int argc, char** argv) {
  if (is_worker_command(argc, argv)) return run_probe_worker(argc, argv);
  return axon::cli::run_main("axon-plugin-check", [&] {
    const std::optional<Options> o = parse(argc, argv);
    return o ? check(*o) : 0;
  });
}
