// Helpers for runtime tests. The runtime is initialised once per process, so
// every TEST_CASE that calls init_runtime() must run in its own process:
// ctest does that (catch_discover_tests registers each case separately).
#pragma once

#include <axon/error.hpp>
#include <axon/runtime.hpp>
#include <axon/tensor.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace axon::test {

inline std::string plugin_dir(const char* folder) { return std::string(AXON_TEST_PLUGIN_DIRS) + "/" + folder; }

// A Config that ignores the caller's environment; `folders` are test plugin
// folders searched before the build tree's own (cpu, reference, cuda).
inline Config test_config(const std::vector<const char*>& folders = {}) {
  Config c;
  for (const char* f : folders) c.plugin_dirs.push_back(plugin_dir(f));
  return c;
}

// Redirects stderr (fd 2) into a file while alive; text() stops and reads it.
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    path_ = "/tmp/axon-test-stderr-" + std::to_string(::getpid()) + ".txt";
    saved_ = ::dup(2);
    FILE* f = std::fopen(path_.c_str(), "w");
    ::dup2(::fileno(f), 2);
    std::fclose(f);
  }
  ~StderrCapture() {
    stop();
    std::remove(path_.c_str());
  }
  std::string text() {
    stop();
    std::ifstream in(path_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Lines of the captured text equal to `line`.
  int count_lines(const std::string& line) {
    std::istringstream in(text());
    int n = 0;
    for (std::string l; std::getline(in, l);) n += (l == line);
    return n;
  }

 private:
  void stop() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::string path_;
  int saved_ = -1;
};

}  // namespace axon::test
