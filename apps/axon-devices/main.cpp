// axon-devices: lists visible devices, excluded devices and skipped plugins,
// then "Num GPUs Available: N". Same device flags and variables as axon-train.
#include "report.hpp"

#include <axon/cli.hpp>
#include <axon/runtime.hpp>

#include <chrono>
#include <iostream>

namespace po = boost::program_options;

int main(int argc, char** argv) {
  return axon::cli::run_main("axon-devices", [&] {
    po::options_description general("axon-devices options");
    general.add_options()
      ("help,h", "show this help and exit")
      ("json", "print one JSON object instead of the listing")
      ("timing", "print each plugin's load time and the total start-up time")
      ("ops", "list the ops each device has kernels for, with their dtypes (opens the devices)")
      ("op-table", "print the op table every plugin implements against (Markdown) and exit");
    po::options_description device("device options (same as axon-train)");
    axon::cli::add_device_options(device);
    po::options_description all;
    all.add(general).add(device);

    const po::variables_map vm = axon::cli::parse_command_line(argc, argv, all);
    if (vm.count("help")) {
      std::cout << "Usage: axon-devices [options]\n\nLists the devices axon can use, the devices it found but "
                   "excluded, and the plugins it skipped, each with the reason.\n\n"
                << all << "\nEnvironment variables and details: docs/cli.md\n";
      return 0;
    }
    if (vm.count("op-table")) {  // needs no plugins
      axon::devices_app::write_op_table(std::cout);
      return 0;
    }
    axon::Config config = axon::cli::make_config(vm);

    auto t0 = std::chrono::steady_clock::now();
    axon::Runtime& rt = axon::Runtime::init(config);
    axon::devices_app::ReportOptions opt;
    opt.startup_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    opt.ops = vm.count("ops") > 0;
    opt.timing = vm.count("timing") > 0;
    if (vm.count("json"))
      axon::devices_app::write_json(std::cout, rt, opt);
    else
      axon::devices_app::write_text(std::cout, rt, opt);
    return 0;  // run_main reports output that did not reach stdout
  });
}
