// Start-up benchmark: runs axon-devices --json as a fresh process N times and
// reports its wall time (min / median / max) next to what it says about
// itself: Runtime::init time and each plugin's load time (dlopen + init +
// device_count). Usage: axon-bench-startup [--runs N] [--exe PATH] [-- ARGS]
// Extra ARGS go to axon-devices (e.g. --cpu-devices 2).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Run {
  double wall_ms = 0;
  std::string out;
  int status = 0;
};

Run run_once(const std::vector<std::string>& argv) {
  int pipefd[2];
  if (pipe(pipefd) != 0) {
    std::perror("pipe");
    std::exit(1);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Run r;
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) {
    std::fprintf(stderr, "axon-bench-startup: cannot run %s\n", args[0]);
    std::exit(1);
  }
  close(pipefd[1]);
  char buf[4096];
  for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;) r.out.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  waitpid(pid, &r.status, 0);
  r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  posix_spawn_file_actions_destroy(&fa);
  return r;
}

// Reads `"key": <number>` after position `from` (axon-devices' own format).
double number_after(const std::string& s, const std::string& key, size_t from, size_t* at = nullptr) {
  size_t p = s.find("\"" + key + "\": ", from);
  if (p == std::string::npos) return -1;
  if (at) *at = p;
  return std::atof(s.c_str() + p + key.size() + 4);
}

std::string string_after(const std::string& s, const std::string& key, size_t from, size_t* at) {
  size_t p = s.find("\"" + key + "\": \"", from);
  if (p == std::string::npos) return {};
  *at = p;
  size_t b = p + key.size() + 5;
  return s.substr(b, s.find('"', b) - b);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20;
  std::string exe = (std::filesystem::canonical("/proc/self/exe").parent_path() / "axon-devices").string();
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--exe" && i + 1 < argc) {
      exe = argv[++i];
    } else if (a == "--") {
      extra.assign(argv + i + 1, argv + argc);
      break;
    } else {
      std::fprintf(stderr, "usage: axon-bench-startup [--runs N] [--exe PATH] [-- AXON_DEVICES_ARGS]\n");
      return 2;
    }
  }
  std::vector<std::string> cmd{exe, "--json"};
  cmd.insert(cmd.end(), extra.begin(), extra.end());

  std::vector<double> wall, init;
  std::map<std::string, std::vector<double>> load;  // plugin -> load_ms per run
  std::map<std::string, std::string> paths;
  for (int i = 0; i < runs; ++i) {
    Run r = run_once(cmd);
    if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
      std::fprintf(stderr, "axon-bench-startup: %s failed (status %d)\n", exe.c_str(), r.status);
      return 1;
    }
    wall.push_back(r.wall_ms);
    init.push_back(number_after(r.out, "startup_ms", 0));
    size_t pos = r.out.find("\"plugins\": [");
    size_t end = r.out.find("\"skipped_plugins\"");
    size_t at = 0;
    while (pos != std::string::npos && pos < end) {
      std::string name = string_after(r.out, "name", pos, &at);
      if (name.empty() || at > end) break;
      size_t path_at = 0;
      paths[name] = string_after(r.out, "path", at, &path_at);
      load[name].push_back(number_after(r.out, "load_ms", at, &pos));
      pos += 1;
    }
  }
  std::sort(wall.begin(), wall.end());
  std::printf("axon-devices start-up, %d fresh processes (%s)\n", runs, exe.c_str());
  std::printf("  wall time          min %7.2f ms   median %7.2f ms   max %7.2f ms   (goal: well under 50 ms)\n",
              wall.front(), median(wall), wall.back());
  std::printf("  Runtime::init      median %7.2f ms   (plugin search, load, device listing; in process)\n",
              median(init));
  std::printf("  process overhead   median %7.2f ms   (exec, dynamic linking, static init, printing)\n",
              median(wall) - median(init));
  std::printf("  per plugin (dlopen + init + device_count), median:\n");
  for (const auto& [name, v] : load)
    std::printf("    %-12s %7.2f ms   %5.1f%% of wall   %s\n", name.c_str(), median(v), 100.0 * median(v) / median(wall),
                paths[name].c_str());
  return 0;
}
