// A count and rate on a terminal's stderr while data loads, redrawn in place
// at most 4 times a second and ended with a newline: "WHAT: DONE/TOTAL UNIT
// (RATE UNIT/s)". Nothing when not asked for or when stderr is not a terminal.
// A load that stops early (an error) ends the line too, so the message that
// follows starts on its own. `what` (it may hold a file name) is printed
// made one printable line.
#pragma once

#include <axon/parse.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace axon::data {

class LoadProgress {
 public:
  // Counts are shown divided by `scale` (1e6 for bytes as MB); `unit` follows
  // the total ("" for files, which the rate names).
  LoadProgress(bool on, std::string what, double total, double scale, std::string unit, std::string rate_unit)
      : on_(on && ::isatty(2) != 0), what_(parse::one_line(what)), total_(total), scale_(scale), unit_(std::move(unit)),
        rate_unit_(std::move(rate_unit)), t0_(Clock::now()), last_(t0_) {}
  ~LoadProgress() {
    if (open_line_) std::fputc('\n', stderr);
  }
  LoadProgress(const LoadProgress&) = delete;
  LoadProgress& operator=(const LoadProgress&) = delete;

  void tick(double done) {
    if (!on_) return;
    const auto now = Clock::now();
    if (now - last_ < std::chrono::milliseconds(250) && done != total_) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - t0_).count();
    std::fprintf(stderr, "\r%s: %.0f/%.0f%s (%.0f %s/s)", what_.c_str(), done / scale_, total_ / scale_, unit_.c_str(),
                 s > 0 ? done / scale_ / s : 0.0, rate_unit_.c_str());
    open_line_ = done != total_;
    if (!open_line_) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_, open_line_ = false;
  std::string what_;
  double total_, scale_;
  std::string unit_, rate_unit_;
  Clock::time_point t0_, last_;
};

}  // namespace axon::data
