// The apps' device flags (axon::cli::add_device_options) parsed from an
// argument list, as a program would see them: for the tests of flags and
// of how flags and AXON_* variables combine.
#pragma once

#include <axon/cli.hpp>
#include <axon/config.hpp>

#include <boost/program_options.hpp>

#include <utility>
#include <vector>

namespace axon::test {

inline boost::program_options::variables_map parse_device_flags(std::vector<const char*> args) {
  namespace po = boost::program_options;
  po::options_description opts;
  cli::add_device_options(opts);
  args.insert(args.begin(), "app");
  po::variables_map vm;
  po::store(po::command_line_parser(static_cast<int>(args.size()), args.data()).options(opts).run(), vm);
  po::notify(vm);
  return vm;
}

// The Config those flags and the environment make.
inline Config config_from_device_flags(std::vector<const char*> args) {
  return cli::make_config(parse_device_flags(std::move(args)));
}

}  // namespace axon::test
