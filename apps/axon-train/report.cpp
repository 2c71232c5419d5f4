#include "report.hpp"

#include <axon/parse.hpp>

#include <sys/resource.h>

namespace axon::train_app {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

double RunResult::seconds_per_epoch() const {
  double t = 0;
  for (const auto& e : history.epochs) t += e.seconds;
  return history.epochs.empty() ? 0 : t / static_cast<double>(history.epochs.size());
}

double RunResult::samples_per_second() const {
  double t = 0, n = 0;
  for (const auto& e : history.epochs) t += e.seconds, n += static_cast<double>(e.samples);
  return t > 0 ? n / t : 0;
}

double RunResult::input_wait_seconds() const {
  double t = 0;
  for (const auto& e : history.epochs) t += e.input_wait_seconds;
  return t;
}

double RunResult::final_accuracy() const {
  if (history.epochs.empty()) return 0;
  const auto& e = history.epochs.back();
  return e.has_validation ? e.val_accuracy : e.accuracy;
}

std::string class_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + std::to_string(i) + " " + parse::printable(names[i]);
  return s;
}

std::string data_summary(const data::Dataset& ds) {
  std::string s = parse::printable(ds.path) + ": " + std::to_string(ds.train->size()) + " training";
  if (!ds.validation) s += " images (no validation data)";
  else if (ds.validation_path.empty()) s += " and " + std::to_string(ds.validation->size()) + " validation images";
  else
    s += " images, " + std::to_string(ds.validation->size()) + " validation images from " +
         parse::printable(ds.validation_path) + ",";
  return s + " of " + data::shape_text(ds.train->layout()) + ", " + std::to_string(ds.classes_needed()) + " classes";
}

void print_run_summary(std::FILE* out, const RunResult& r) {
  double train = 0, val = 0;
  for (const auto& e : r.history.epochs) train += e.seconds, val += e.validation_seconds;
  const double wait = r.input_wait_seconds();
  std::fprintf(out,
               "Trained %zu epoch%s on %s: %.2f s/epoch, %.0f samples/s (validation %.2f s/epoch); "
               "waited %.3f s for input (%.1f%% of training time)\n",
               r.history.epochs.size(), r.history.epochs.size() == 1 ? "" : "s", r.device.c_str(),
               r.seconds_per_epoch(), r.samples_per_second(),
               r.history.epochs.empty() ? 0.0 : val / static_cast<double>(r.history.epochs.size()), wait,
               train > 0 ? 100.0 * wait / train : 0.0);
}

std::string replicas_label(const Strategy& strategy) {
  if (strategy.num_replicas_in_sync() == 1) return strategy.replica_devices().front()->name();
  std::string s = std::to_string(strategy.num_replicas_in_sync()) + " replicas";
  if (strategy.num_workers() > 1) return s + " on " + std::to_string(strategy.num_workers()) + " workers";
  std::string names;
  for (const Device* d : strategy.replica_devices()) names += (names.empty() ? "" : ", ") + d->name();
  return s + " (" + names + ")";
}

void ReplicaTimesReport::on_epoch_end(const nn::EpochLogs& logs) {
  const std::string title = "Epoch " + std::to_string(logs.epoch) + " time by replica (s)";
  std::fprintf(out_, "%-36s %9s %9s %11s %11s\n", title.c_str(), "compute", "waiting", "all-reduce", "input wait");
  for (const nn::ReplicaTimes& t : logs.replicas)
    std::fprintf(out_, "  %-34s %9.3f %9.3f %11.3f %11.3f\n", t.device.c_str(), t.compute, t.wait,
                 logs.all_reduce_seconds, logs.input_wait_seconds);
  const double steps = logs.steps > 0 ? static_cast<double>(logs.steps) : 1.0;
  std::fprintf(out_, "  all-reduce: %.3f ms per step, %.1f%% of the epoch", 1e3 * logs.all_reduce_seconds / steps,
               logs.seconds > 0 ? 100 * logs.all_reduce_seconds / logs.seconds : 0.0);
  // With buckets: the all-reduce calls (waiting for other workers
  // included) that ran while backward went on.
  if (logs.all_reduce_hidden_seconds > 0)
    std::fprintf(out_, "; %.3f ms per step more ran during backward", 1e3 * logs.all_reduce_hidden_seconds / steps);
  std::fputc('\n', out_);
  std::fflush(out_);
}

void print_memory(std::FILE* out, Device& device) {
  const axon_memory_info m = device.memory_info();
  if (m.in_use == 0 && m.peak_in_use == 0 && m.reserved == 0) {
    std::fprintf(out, "Memory on %s: not reported by the %s plugin\n", device.name().c_str(),
                 device.plugin_name().c_str());
    return;
  }
  std::fprintf(out, "Memory on %s: in use %.1f MiB, peak %.1f MiB, reserved %.1f MiB", device.name().c_str(),
               mib(m.in_use), mib(m.peak_in_use), mib(m.reserved));
  if (m.limit > 0) std::fprintf(out, ", limit %.1f MiB", mib(m.limit));
  if (m.total > 0) std::fprintf(out, ", total %.1f MiB", mib(m.total));
  std::fputc('\n', out);
}

void print_activation_memory(std::FILE* out, nn::Model& model) {
  for (int r = 0; r < model.num_replicas(); ++r) {
    TensorPool& pool = model.replica(r).pool();
    std::fprintf(out, "Activations and gradients on %s: peak %.1f MiB (%.1f MiB kept for reuse)\n",
                 model.replica(r).device().name().c_str(), mib(static_cast<uint64_t>(pool.peak_bytes())),
                 mib(static_cast<uint64_t>(pool.held_bytes())));
  }
}

void print_peak_rss(std::FILE* out) {
  std::fprintf(out, "Peak resident memory: %.1f MiB\n", mib(peak_rss_bytes()));
}

uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

void print_compare_table(std::FILE* out, const std::vector<RunResult>& runs) {
  if (runs.empty()) return;
  std::fprintf(out, "\n%-18s %10s %12s %15s %9s\n", "device", "s/epoch", "samples/s", "final accuracy", "speedup");
  const double base = runs.front().seconds_per_epoch();
  for (const RunResult& r : runs) {
    const double t = r.seconds_per_epoch();
    std::fprintf(out, "%-18s %10.2f %12.0f %15.4f %8.2fx\n", r.device.c_str(), t, r.samples_per_second(),
                 r.final_accuracy(), t > 0 ? base / t : 0.0);
  }
}

}  // namespace axon::train_app
