// Runs the probe worker (probes.hpp) in a child process and turns its lines
// into checks: a worker that dies or hangs during a probe fails that probe
// ("crashed (SIGSEGV)") and another worker goes on from the next one.
#pragma once

#include "probes.hpp"
#include "report.hpp"

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace axon::plugin_check {

// What the bad-input probes say about asynchronous errors.
struct AsyncSummary {
  int bad_inputs = 0;               // bad-input probes that ended (not crashed)
  int by_synchronize = 0;           // refused by synchronize() rather than the call
  int by_event = 0;                 // refused by an event recorded after the call
  std::vector<std::string> lost;    // accepted, and synchronize() said AXON_OK too
  std::vector<std::string> lost_by_events;  // synchronize() reported it, an event after the call did not
};

class ProbeSupervisor {
 public:
  ProbeSupervisor(std::string exe, WorkerArgs args) : exe_(std::move(exe)), args_(std::move(args)) {}
  ~ProbeSupervisor();
  ProbeSupervisor(const ProbeSupervisor&) = delete;
  ProbeSupervisor& operator=(const ProbeSupervisor&) = delete;

  // Starts the first worker and waits until it has loaded the plugin.
  // nullopt when it loaded it, or was refused (the checker's own load then
  // reports why, or, if that load succeeds, collect() does); otherwise how
  // the worker died while loading.
  std::optional<std::string> start();

  // Reads every probe's result into `report`, restarting after a crash.
  AsyncSummary collect(Report& report);

 private:
  bool spawn(int first, std::string* why);
  std::optional<std::string> read_line(int timeout_ms, bool* timed_out);
  std::string reap();  // waits for the worker: "crashed (SIGSEGV)", "exited with status 1"
  void stop();

  std::string exe_;
  WorkerArgs args_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
  std::string load_error_;  // the first worker's "L fail" reason
};

}  // namespace axon::plugin_check
