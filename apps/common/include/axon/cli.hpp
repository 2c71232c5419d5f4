// Command-line helpers shared by the apps: the device flags (docs/cli.md),
// the Config they produce, and main()'s exit codes (0 ok, 1 runtime failure,
// 2 bad usage or input), each failure printed once as "<app>: error: ...".
#pragma once

#include <axon/config.hpp>
#include <axon/error.hpp>

#include <boost/program_options.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

namespace axon::cli {

// --plugin-dir, --visible-devices, --cpu-devices, --threads,
// --log-device-placement, --strict-placement, --gpu-memory-growth,
// --gpu-memory-limit, --allow-tf32, --deterministic, --check-numerics,
// --log-level, --allow-insecure-plugin-path.
void add_device_options(boost::program_options::options_description& options);

// The environment first (Config::from_environment), then the flags, which
// win. --plugin-dir folders are searched before AXON_PLUGIN_PATH's. Throws
// UsageError for out-of-range values.
Config make_config(const boost::program_options::variables_map& vm);

// Parses argv against `options`. A stray positional word is a UsageError
// naming it; so is every error Boost reports (an unknown flag, a malformed
// value), with the values it quotes cut as parse::printable cuts them.
boost::program_options::variables_map parse_command_line(int argc, char** argv,
                                                         const boost::program_options::options_description& options);

// The image flags of axon-train and axon-predict: --image-size H,W (each
// from 1 to limits::kMaxModelImageSide) into rows and cols, and
// --color-mode grayscale|rgb|rgba into 1, 3 or 4 channels. UsageError
// naming the flag otherwise.
void parse_image_size(const std::string& value, int64_t& rows, int64_t& cols);
int parse_color_mode(const std::string& value);

// Prints "<app>: error: <message>" on stderr, made one printable line.
void print_error(const char* app, const std::string& message);

// Flushes stdout; RuntimeError "cannot write to standard output: ..." when
// that or an earlier write to it failed (a full disk, /dev/full, a closed pipe).
void check_stdout();

// Runs body() (which returns the exit code) and maps failures to exit codes.
// Output that never reached stdout is a failure too (exit 1).
template <class F>
int run_main(const char* app, F&& body) {
  try {
    const int code = body();
    if (code == 0) check_stdout();
    return code;
  } catch (const UsageError& e) {
    print_error(app, e.what());
    return 2;
  } catch (const boost::program_options::error& e) {
    print_error(app, std::string(e.what()) + " (see --help)");
    return 2;
  } catch (const RuntimeError& e) {
    print_error(app, e.what());
    return 1;
  } catch (const std::exception& e) {
    print_error(app, e.what());
    return 1;
  }
}

}  // namespace axon::cli
