#include <axon/train/progress.hpp>

#include <axon/parse.hpp>
#include <axon/workers.hpp>

#include <cmath>
#include <cstdlib>
#include <unistd.h>

namespace axon::train {
namespace {

std::string printf_string(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string eta_string(double eta) {
  char b[32];
  const auto s = static_cast<long>(eta);
  if (eta > 3600) std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", s / 3600, (s % 3600) / 60, s % 60);
  else if (eta > 60) std::snprintf(b, sizeof b, "%ld:%02ld", s / 60, s % 60);
  else std::snprintf(b, sizeof b, "%lds", s);
  return b;
}

}  // namespace

std::string progress_bar(int64_t current, int64_t target) {
  constexpr int kWidth = 30;
  const int digits = target > 0 ? static_cast<int>(std::log10(static_cast<double>(target))) + 1 : 1;
  char head[64];
  std::snprintf(head, sizeof head, "%*lld/%lld [", digits, static_cast<long long>(current),
                static_cast<long long>(target));
  std::string bar = head;
  const int filled = target > 0 ? static_cast<int>(kWidth * static_cast<double>(current) / static_cast<double>(target)) : 0;
  if (filled > 0) {
    bar.append(static_cast<size_t>(filled - 1), '=');
    bar += current < target ? '>' : '=';
  }
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  return bar + "]";
}

std::string time_per_step(double t) {
  if (t >= 1 || t == 0) return printf_string("%.0fs/step", t);
  if (t >= 1e-3) return printf_string("%.0fms/step", t * 1e3);
  return printf_string("%.0fus/step", t * 1e6);
}

std::string metric(const std::string& name, double value) {
  return " - " + name + ": " + printf_string(std::fabs(value) > 1e-3 ? "%.4f" : "%.4e", value);
}

std::string metrics(const nn::NamedValues& values, const char* prefix = "") {
  std::string s;
  for (const auto& [name, value] : values) s += metric(prefix + name, value);
  return s;
}

std::string epoch_line(const nn::EpochLogs& l) {
  // Like Keras, the time shown includes the validation pass.
  const double total = l.seconds + l.validation_seconds;
  std::string s = progress_bar(l.steps, l.steps) + printf_string(" - %.0fs ", total) +
                  time_per_step(l.steps > 0 ? total / static_cast<double>(l.steps) : 0) + metric("loss", l.loss) +
                  metric("accuracy", l.accuracy) + metrics(l.metrics);
  if (l.has_validation)
    s += metric("val_loss", l.val_loss) + metric("val_accuracy", l.val_accuracy) + metrics(l.val_metrics, "val_");
  return s;
}

ProgressBar::ProgressBar(std::FILE* out, bool interactive, double interval_seconds)
    : out_(out), interactive_(interactive), interval_(interval_seconds) {}

void ProgressBar::on_epoch_begin(int epoch, int epochs, int64_t steps) {
  std::fprintf(out_, "Epoch %d/%d\n", epoch, epochs);
  std::fflush(out_);
  steps_ = steps;
  last_width_ = 0;
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

void ProgressBar::on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) {
  if (!interactive_) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t done = step + 1;
  // The last step is drawn by on_epoch_end with the validation figures.
  if (done == steps_ || std::chrono::duration<double>(now - last_draw_).count() < interval_) return;
  last_draw_ = now;
  const nn::MetricValues m = read();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta = elapsed / static_cast<double>(done) * static_cast<double>(steps_ - done);
  draw(progress_bar(done, steps_) + " - ETA: " + eta_string(eta) + metric("loss", m.loss) +
       metric("accuracy", m.accuracy) + metrics(m.metrics));
}

void ProgressBar::on_epoch_end(const nn::EpochLogs& logs) {
  const std::string line = epoch_line(logs);
  if (interactive_) draw(line);
  else std::fputs(line.c_str(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void ProgressBar::draw(const std::string& line) {
  // Return to the line start and blank whatever the previous, longer line left.
  std::string s = "\r" + line;
  if (line.size() < last_width_) s.append(last_width_ - line.size(), ' ');
  last_width_ = line.size();
  std::fputs(s.c_str(), out_);
  std::fflush(out_);
}

bool redraw_progress() {
  if (const char* v = std::getenv("AXON_PROGRESS_BAR"); v != nullptr && *v != '\0')
    return parse::boolean("AXON_PROGRESS_BAR", v);
  return ::isatty(::fileno(stdout)) != 0 && !started_by_mpi_launcher();
}

}  // namespace axon::train
