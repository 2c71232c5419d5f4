#include "training.hpp"

#include <axon/data/mnist.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;

namespace axon::plugin_check {
namespace {

constexpr int kTrainTimeoutS = 900;

struct Metrics {
  double loss = 0, accuracy = 0, val_loss = 0, val_accuracy = 0;
};

struct RunResult {
  bool ok = false;
  std::string problem;  // when !ok
  Metrics metrics;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string last_line(const std::string& text) {
  std::istringstream in(text);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream s(line);
  std::string cell;
  while (std::getline(s, cell, ',')) out.push_back(cell);
  return out;
}

// The last row of --metrics-csv, by the header's column names.
bool read_metrics(const fs::path& csv, Metrics* m, std::string* why) {
  std::istringstream in(read_file(csv));
  std::string header, line, last;
  std::getline(in, header);
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  const std::vector<std::string> names = split(header), values = split(last);
  auto value = [&](const char* col, double* out) {
    for (size_t i = 0; i < names.size() && i < values.size(); ++i)
      if (names[i] == col && !values[i].empty()) {
        *out = std::strtod(values[i].c_str(), nullptr);
        return true;
      }
    *why = std::string("no ") + col + " in " + csv.string();
    return false;
  };
  return value("loss", &m->loss) && value("accuracy", &m->accuracy) && value("val_loss", &m->val_loss) &&
         value("val_accuracy", &m->val_accuracy);
}

// Runs axon-train for one device; its output goes to files in `dir`.
RunResult train(const fs::path& program, const TrainSettings& s, const std::string& device, const fs::path& dir) {
  RunResult r;
  const std::string tag = device == "cpu:0" ? "cpu" : "device";
  const fs::path csv = dir / (tag + ".csv"), out = dir / (tag + ".out"), err = dir / (tag + ".err");
  const std::vector<std::string> args = {program.string(), "--device", device, "--epochs", "1",
                                         "--train-limit", "640", "--test-limit", "320", "--seed", "1",
                                         "--data", s.data_dir, "--metrics-csv", csv.string()};
  // The caller's environment, with only the plugin's folder added to the search.
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "AXON_PLUGIN_PATH=", 17) != 0 && std::strncmp(*e, "AXON_VISIBLE_DEVICES=", 21) != 0)
      env.emplace_back(*e);
  env.push_back("AXON_PLUGIN_PATH=" + fs::path(s.plugin_file).parent_path().string());
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const std::string out_s = out.string(), err_s = err.string();

  const pid_t pid = ::fork();
  if (pid < 0) {
    r.problem = std::string("fork: ") + std::strerror(errno);
    return r;
  }
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int in_fd = ::open("/dev/null", O_RDONLY);
    const int out_fd = ::open(out_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd = ::open(err_s.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in_fd < 0 || out_fd < 0 || err_fd < 0) _exit(126);
    ::dup2(in_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTrainTimeoutS);
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      r.problem = std::string("waitpid: ") + std::strerror(errno);
      return r;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.problem = "axon-train --device " + device + " did not finish within " + std::to_string(kTrainTimeoutS) + " s";
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string stdout_text = read_file(out), stderr_text = read_file(err);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    r.problem = "axon-train --device " + device + " " +
                (WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                   : "was killed by signal " + std::to_string(WTERMSIG(status))) +
                ": " + last_line(stderr_text);
    return r;
  }
  // A missing device makes axon-train fall back to the CPU with a warning.
  std::string type = device.substr(0, device.find(':'));
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const std::string want = "Training on /device:" + type + ":" + device.substr(device.find(':') + 1) + " ";
  if (stdout_text.find("\n" + want) == std::string::npos && stdout_text.rfind(want, 0) != 0) {
    r.problem = "axon-train did not train on /device:" + type + ":" + device.substr(device.find(':') + 1) + ": " +
                last_line(stderr_text);
    return r;
  }
  if (!read_metrics(csv, &r.metrics, &r.problem)) return r;
  r.ok = true;
  return r;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4f", v);
  return b;
}

}  // namespace

void check_training(const TrainSettings& s, Report& report) {
  const std::string dev_name = "/device:" + s.device_type + ":" + std::to_string(s.device_index);
  const std::string name = "training: " + dev_name + " against /device:CPU:0";
  const fs::path program = fs::path(s.program_dir) / "axon-train";
  if (!fs::exists(program)) return report.skip(name, "no axon-train next to axon-plugin-check in " + s.program_dir);
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    if (data::find_idx_file(s.data_dir, stem).empty())
      return report.skip(name, "no data set in " + s.data_dir + " (" + stem + "[.gz] is missing; --data DIR names one)");

  std::string lower_type = s.device_type;
  for (char& c : lower_type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string tmpl = (fs::temp_directory_path() / "axon-plugin-check.XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) return report.fail(name, std::string("mkdtemp: ") + std::strerror(errno));
  const fs::path dir = tmpl;
  const RunResult on_device = train(program, s, lower_type + ":" + std::to_string(s.device_index), dir);
  const RunResult on_cpu = on_device.ok ? train(program, s, "cpu:0", dir) : RunResult{};
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (!on_device.ok) return report.fail(name, on_device.problem);
  if (!on_cpu.ok) return report.fail(name, "the run on the CPU failed: " + on_cpu.problem);

  const Metrics& d = on_device.metrics;
  const Metrics& c = on_cpu.metrics;
  const std::string detail = "loss " + num(d.loss) + " (CPU " + num(c.loss) + "), accuracy " + num(d.accuracy) +
                             " (" + num(c.accuracy) + "), val_loss " + num(d.val_loss) + " (" + num(c.val_loss) +
                             "), val_accuracy " + num(d.val_accuracy) + " (" + num(c.val_accuracy) +
                             "); one epoch of 640 images, seed 1";
  const bool ok = std::fabs(d.loss - c.loss) <= kLossTolerance * std::fabs(c.loss) &&
                  std::fabs(d.val_loss - c.val_loss) <= kLossTolerance * std::fabs(c.val_loss) &&
                  std::fabs(d.accuracy - c.accuracy) <= kAccuracyTolerance &&
                  std::fabs(d.val_accuracy - c.val_accuracy) <= kAccuracyTolerance;
  if (ok) return report.pass(name, detail);
  report.fail(name, detail + ": beyond 2% of the CPU's loss or 2 points of its accuracy");
}

}  // namespace axon::plugin_check
