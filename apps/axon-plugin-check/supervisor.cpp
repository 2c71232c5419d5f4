#include "supervisor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace axon::plugin_check {
namespace {

constexpr int kLoadTimeoutMs = 120'000;  // a GPU plugin's first open can take a while
constexpr int kProbeTimeoutMs = 60'000;

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGTERM: return "SIGTERM";
    default: return nullptr;
  }
}

}  // namespace

ProbeSupervisor::~ProbeSupervisor() { stop(); }

void ProbeSupervisor::stop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

bool ProbeSupervisor::spawn(int first, std::string* why) {
  stop();
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    *why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  WorkerArgs a = args_;
  a.fd = p[1];
  a.first = first;
  const std::vector<std::string> cmd = worker_command(exe_, a);
  std::vector<char*> argv;
  for (const std::string& s : cmd) argv.push_back(const_cast<char*>(s.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    *why = std::string("fork: ") + std::strerror(errno);
    ::close(p[0]);
    ::close(p[1]);
    return false;
  }
  if (pid == 0) {  // only async-signal-safe calls until exec
    ::fcntl(p[1], F_SETFD, 0);
    ::dup2(2, 1);  // stdout stays the checker's own (--json)
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // a crash is expected here; no core file
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(p[1]);
  pid_ = pid;
  fd_ = p[0];
  return true;
}

std::optional<std::string> ProbeSupervisor::read_line(int timeout_ms, bool* timed_out) {
  *timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (const size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      *timed_out = true;
      return std::nullopt;
    }
    pollfd pfd{fd_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the deadline check above ends it
    char chunk[4096];
    const ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // the worker closed its end: it ended
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

std::string ProbeSupervisor::reap() {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (r < 0) return "vanished";
  if (WIFSIGNALED(status)) {
    const char* name = signal_name(WTERMSIG(status));
    return std::string("crashed (") + (name ? name : "signal " + std::to_string(WTERMSIG(status))) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

std::optional<std::string> ProbeSupervisor::start() {
  std::string why;
  if (!spawn(args_.first, &why)) return "could not start a probe worker: " + why;
  bool timed_out = false;
  std::optional<std::string> line = read_line(kLoadTimeoutMs, &timed_out);
  if (line && line->rfind("L fail ", 0) == 0) load_error_ = line->substr(7);
  if (line && line->rfind("L ", 0) == 0) return std::nullopt;
  if (timed_out) {
    ::kill(pid_, SIGKILL);
    reap();
    return "hung while loading (killed after " + std::to_string(kLoadTimeoutMs / 1000) + " s)";
  }
  return reap() + " while loading";
}

AsyncSummary ProbeSupervisor::collect(Report& report) {
  AsyncSummary async;
  if (!load_error_.empty()) {
    report.fail("probe worker", "could not use the device opened with a " + std::to_string(kProbeLimitMb) +
                                    " MiB memory limit: " + load_error_);
    stop();
    return async;
  }
  int current = -1;
  std::string current_name;
  for (;;) {
    bool timed_out = false;
    std::optional<std::string> line = pid_ > 0 ? read_line(kProbeTimeoutMs, &timed_out) : std::nullopt;
    if (!line) {
      if (pid_ <= 0) return async;
      if (timed_out) ::kill(pid_, SIGKILL);
      const std::string died = reap();
      const std::string how =
          timed_out ? "hung: no answer within " + std::to_string(kProbeTimeoutMs / 1000) + " s (killed)" : died;
      if (current < 0) {
        report.fail("probe worker", "ended outside a probe: " + how);
        return async;
      }
      report.fail(current_name, how);
      const int next = current + 1;
      current = -1;
      std::string why;
      if (!spawn(next, &why)) {
        report.fail("probe worker", "could not restart it: " + why);
        return async;
      }
      std::optional<std::string> loaded = read_line(kLoadTimeoutMs, &timed_out);
      if (!loaded || *loaded != "L ok") {
        report.fail("probe worker", "a restarted worker did not load the plugin: " + (loaded ? *loaded : reap()));
        stop();
        return async;
      }
      continue;
    }
    const std::string& l = *line;
    if (l.rfind("B ", 0) == 0) {
      const size_t sp = l.find(' ', 2);
      current = std::atoi(l.c_str() + 2);
      current_name = sp == std::string::npos ? "probe " + std::to_string(current) : l.substr(sp + 1);
    } else if (l.rfind("R ", 0) == 0) {
      const size_t sp = l.find(' ', 2);
      const char code = sp != std::string::npos && sp + 1 < l.size() ? l[sp + 1] : 'F';
      const std::string detail = sp != std::string::npos && sp + 3 <= l.size() ? l.substr(sp + 3) : "";
      const bool bad_input = current_name.rfind("bad input:", 0) == 0;
      if (bad_input) ++async.bad_inputs;
      switch (code) {
        case 'P':
          if (bad_input && detail.rfind("reported by synchronize()", 0) == 0) ++async.by_synchronize;
          if (bad_input && detail.rfind("reported by an event", 0) == 0) ++async.by_event;
          report.pass(current_name, detail);
          break;
        case 'S': report.skip(current_name, detail); break;
        case 'A': async.lost.push_back(current_name.substr(std::strlen("bad input: "))); break;
        case 'V': async.lost_by_events.push_back(current_name.substr(std::strlen("bad input: "))); break;
        default: report.fail(current_name, detail); break;
      }
      current = -1;
    } else if (l.rfind("X ", 0) == 0) {
      report.fail("probe worker", l.substr(2));
      reap();
      return async;
    } else if (l == "E") {
      const std::string end = reap();
      if (end != "exited with status 0") report.fail("probe worker", "ended badly: " + end);
      return async;
    }
  }
}

}  // namespace axon::plugin_check
