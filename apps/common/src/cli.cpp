// The device flags and their mapping onto Config (see docs/cli.md).
#include <axon/cli.hpp>
#include <axon/limits.hpp>
#include <axon/log.hpp>
#include <axon/parse.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

namespace po = boost::program_options;

namespace axon::cli {

void add_device_options(po::options_description& options) {
  options.add_options()
    ("plugin-dir", po::value<std::vector<std::string>>()->composing()->value_name("DIR"),
     "search DIR for plugins (libaxon-plugin-*.so) before AXON_PLUGIN_PATH; repeatable")
    ("visible-devices", po::value<std::string>()->value_name("LIST"),
     "only these devices, renumbered per type in this order, e.g. gpu:1,cpu:0 [AXON_VISIBLE_DEVICES]")
    ("cpu-devices", po::value<int>()->value_name("N"),
     ("split the CPU into N logical devices, at most " + std::to_string(limits::kMaxCpuDevices) +
      " [AXON_CPU_DEVICE_COUNT, default 1]").c_str())
    ("threads", po::value<int>()->value_name("N"),
     ("CPU threads in all (divided among CPU devices, at least one each); 0 = all cores; at most " +
      std::to_string(limits::kMaxThreads) + " [AXON_NUM_THREADS]").c_str())
    ("log-device-placement", po::bool_switch(),
     "print 'Executing op OP (LAYER) in device DEV' once per op, layer and device [AXON_LOG_DEVICE_PLACEMENT=1]")
    ("strict-placement", po::bool_switch(),
     "an op without a kernel on its device is an error, not a CPU fallback [AXON_STRICT_PLACEMENT=1]")
    ("gpu-memory-growth", po::bool_switch(),
     "allocate GPU memory on demand instead of reserving most of it [AXON_GPU_MEMORY_GROWTH=1]")
    ("gpu-memory-limit", po::value<int64_t>()->value_name("MB"),
     "cap GPU memory per device at MB mebibytes (implies growth) [AXON_GPU_MEMORY_LIMIT_MB]")
    ("allow-tf32", po::bool_switch(), "let GPU matrix products use TF32 [AXON_ALLOW_TF32=1]")
    ("deterministic", po::bool_switch(),
     "GPU convolutions use only algorithms that give the same bits on every run [AXON_DETERMINISTIC=1]")
    ("check-numerics", po::bool_switch(),
     "check every float output of every op for NaN and Inf and fail at the first, naming op, layer and device "
     "(slow: waits for each op) [AXON_CHECK_NUMERICS=1]")
    ("log-level", po::value<std::string>()->value_name("LEVEL"),
     "debug, info, warning or error [AXON_LOG_LEVEL, default warning]")
    ("allow-insecure-plugin-path", po::bool_switch(),
     "also load plugins from world-writable folders or files (anyone could have put them there)");
}

Config make_config(const po::variables_map& vm) {
  Config c = Config::from_environment();
  if (vm.count("plugin-dir")) {
    std::vector<std::string> dirs = vm["plugin-dir"].as<std::vector<std::string>>();
    // A folder the user named and that is not there is said, not passed over quietly.
    for (const std::string& d : dirs) {
      std::error_code ec;
      if (!std::filesystem::is_directory(d, ec))
        log::warning("loader", "--plugin-dir " + parse::printable(d) +
                                   (std::filesystem::exists(d, ec) ? " is not a folder" : " does not exist") +
                                   ": no plugins from it");
    }
    dirs.insert(dirs.end(), c.plugin_dirs.begin(), c.plugin_dirs.end());
    c.plugin_dirs = std::move(dirs);
  }
  if (vm.count("visible-devices")) {
    c.visible_devices = vm["visible-devices"].as<std::string>();
    c.visible_devices_source = "--visible-devices";
  }
  if (vm.count("cpu-devices")) {
    int n = vm["cpu-devices"].as<int>();
    if (n < 1 || n > limits::kMaxCpuDevices)
      throw UsageError("--cpu-devices must be from 1 to " + std::to_string(limits::kMaxCpuDevices) + ", got " +
                       std::to_string(n));
    c.cpu_devices = n;
  }
  if (vm.count("threads")) {
    int n = vm["threads"].as<int>();
    if (n < 0 || n > limits::kMaxThreads)
      throw UsageError("--threads must be from 0 (all cores) to " + std::to_string(limits::kMaxThreads) + ", got " +
                       std::to_string(n));
    c.threads = n;
  }
  auto on = [&](const char* name) { return vm.count(name) && vm[name].as<bool>(); };
  if (on("log-device-placement")) c.log_device_placement = true;
  if (on("strict-placement")) c.strict_placement = true;
  if (on("gpu-memory-growth")) c.gpu_memory_growth = true;
  if (on("allow-tf32")) c.allow_tf32 = true;
  if (on("deterministic")) c.deterministic = true;
  if (on("check-numerics")) c.check_numerics = true;
  if (on("allow-insecure-plugin-path")) c.allow_insecure_plugin_path = true;
  if (vm.count("gpu-memory-limit")) {
    int64_t mb = vm["gpu-memory-limit"].as<int64_t>();
    if (mb < 1 || mb > (int64_t{1} << 43))
      throw UsageError("--gpu-memory-limit must be from 1 to " + std::to_string(int64_t{1} << 43) + " MB, got " +
                       std::to_string(mb));
    c.gpu_memory_limit_mb = mb;
  }
  if (vm.count("log-level")) {
    std::string level = vm["log-level"].as<std::string>();
    try {
      log::parse_level(level);
    } catch (const UsageError& e) {
      throw UsageError(std::string("--log-level: ") + e.what());
    }
    c.log_level = level;
  }
  c.validate();
  return c;
}

namespace {

// Boost quotes what it echoes ("unrecognised option '--x'", "the argument
// ('v') for option '--n' is invalid"): each quoted part is cut as a value.
std::string cut_quoted(const std::string& message) {
  std::string out;
  bool quoted = false;
  for (size_t start = 0;;) {
    const size_t quote = message.find('\'', start);
    const std::string part = message.substr(start, quote == std::string::npos ? std::string::npos : quote - start);
    out += quoted ? parse::printable(part) : part;
    if (quote == std::string::npos) return out;
    out += '\'';
    start = quote + 1;
    quoted = !quoted;
  }
}

}  // namespace

po::variables_map parse_command_line(int argc, char** argv, const po::options_description& options) {
  // Positional words are collected, so that a stray one can be named.
  po::options_description all;
  all.add(options);
  all.add_options()("positional-word", po::value<std::vector<std::string>>());
  po::positional_options_description positional;
  positional.add("positional-word", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(cut_quoted(e.what()) + " (see --help)");
  }
  if (vm.count("positional-word"))
    throw UsageError("unexpected argument '" +
                     parse::printable(vm["positional-word"].as<std::vector<std::string>>()[0]) +
                     "': not a flag or a flag's value (see --help)");
  return vm;
}

void check_stdout() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int e = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return;
  throw RuntimeError(std::string("cannot write to standard output: ") +
                     (e != 0 ? std::strerror(e) : "an earlier write failed"));
}

void print_error(const char* app, const std::string& message) {
  std::string line = std::string(app) + ": error: " + parse::one_line(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void parse_image_size(const std::string& value, int64_t& rows, int64_t& cols) {
  const size_t comma = value.find(',');
  if (comma == std::string::npos)
    throw UsageError("--image-size takes H,W (e.g. 28,28), got '" + parse::printable(value) + "'");
  rows = parse::integer("--image-size", value.substr(0, comma), 1, limits::kMaxModelImageSide);
  cols = parse::integer("--image-size", value.substr(comma + 1), 1, limits::kMaxModelImageSide);
}

int parse_color_mode(const std::string& value) {
  if (value == "grayscale") return 1;
  if (value == "rgb") return 3;
  if (value == "rgba") return 4;
  throw UsageError("--color-mode must be grayscale, rgb or rgba, got '" + parse::printable(value) + "'");
}

}  // namespace axon::cli
