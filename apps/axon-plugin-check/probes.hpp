// The checks that may crash or hang the process that runs them: the bad-input
// cases of every op the device has, allocate(0), an allocation past the
// memory limit and an absurd one. They run in a child process, the probe
// worker (this program again, started with --probe-worker), which loads the
// plugin itself, opens its device with a memory limit (kProbeLimitMb), and
// reports over a pipe, one line each:
//   L ok | L fail <why>        the plugin loaded, or not
//   B <index> <name>           probe <index> starts
//   R <index> <code> <detail>  it ended: P passed, F failed, S skipped,
//                              A accepted bad input and never reported it
//   E                          all done
// A worker that dies between B and R crashed on that probe; the supervisor
// (supervisor.hpp) reports it and starts another from the next probe.
#pragma once

#include "loading.hpp"

#include <string>
#include <vector>

namespace axon::plugin_check {

inline constexpr int64_t kProbeLimitMb = 16;

struct WorkerArgs {
  int fd = -1;      // the pipe's write end
  int first = 0;    // the first probe to run
  LoadSettings load;
  std::string op;   // --op, or "" for all
};

// The command line that runs a worker (argv[0] = this program).
std::vector<std::string> worker_command(const std::string& exe, const WorkerArgs& a);

// True when argv is a worker's command line.
bool is_worker_command(int argc, char** argv);

// main() of the worker.
int run_probe_worker(int argc, char** argv);

}  // namespace axon::plugin_check
