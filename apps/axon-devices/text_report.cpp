// The listing for people. Every device that is not offered, and every plugin
// that was not used, comes with its reason.
#include "report.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cstdio>
#include <string>

namespace axon::devices_app {

std::string human_bytes(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

namespace {

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void write_device(std::ostream& out, Device& d, const ReportOptions& opt) {
  const axon_device_props& p = d.props();
  out << "  " << d.name() << "  " << p.name << "\n";
  out << "      type " << d.type() << ", plugin " << d.plugin_name() << " (priority " << d.priority()
      << "), physical id " << d.physical_id();
  if (p.memory_total) {
    out << ", memory " << human_bytes(p.memory_total);
    if (p.memory_free) out << " (" << human_bytes(p.memory_free) << " free)";
  }
  if (p.threads) out << ", threads " << p.threads;
  out << "\n";
  std::string extra;
  if (p.compute_major) extra += "compute capability " + std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor);
  if (p.pci_bus_id[0]) extra += (extra.empty() ? "" : ", ") + std::string("pci bus id ") + p.pci_bus_id;
  if (p.uuid[0]) extra += (extra.empty() ? "" : ", ") + std::string("uuid ") + p.uuid;
  if (!extra.empty()) out << "      " << extra << "\n";
  if (p.description[0]) out << "      " << p.description << "\n";
  if (opt.ops) {
    try {
      const auto kernels = d.kernels();
      out << "      ops (" << kernels.size() << "):";
      for (const auto& k : kernels) {
        out << " " << op_name(k.op) << "[";
        for (size_t i = 0; i < k.dtypes.size(); ++i) out << (i ? "," : "") << dtype_name(k.dtypes[i]);
        out << "]";
      }
      out << "\n";
      if (const auto unknown = d.unknown_ops(); !unknown.empty()) {
        out << "      listed but not in this axon's op table (never called):";
        for (const auto& o : unknown) out << " " << o;
        out << "\n";
      }
    } catch (const std::exception& e) {
      out << "      ops: " << e.what() << "\n";
    }
  }
}

}  // namespace

void write_text(std::ostream& out, const Runtime& rt, const ReportOptions& opt) {
  const auto& devices = rt.devices();
  out << "Visible devices (" << devices.size() << "):\n";
  if (devices.empty()) out << "  (none)\n";
  for (Device* d : devices) write_device(out, *d, opt);

  if (rt.config().visible_devices) {
    out << "Logical -> physical (" << rt.config().visible_devices_source << "="
        << parse::one_line(*rt.config().visible_devices) << "):\n";
    for (Device* d : devices)
      out << "  " << d->name() << " -> " << d->original_name() << " (" << d->plugin_name() << " physical id "
          << d->physical_id() << ")\n";
  }

  const auto& excluded = rt.excluded();
  if (!excluded.empty()) {
    out << "Excluded devices (" << excluded.size() << "):\n";
    for (const auto& e : excluded) {
      out << "  " << e.name << " (plugin " << e.plugin;
      if (e.physical_id >= 0) out << ", physical id " << e.physical_id;
      out << "): " << e.reason << "\n";
    }
  }

  out << "Plugins (" << rt.plugins().size() << "):\n";
  if (rt.plugins().empty()) out << "  (none found)\n";
  for (const auto& p : rt.plugins()) {
    out << "  " << p.name << " " << p.version << " (" << p.device_type << ", priority " << p.priority << ", ABI "
        << p.abi << "): " << plural(static_cast<size_t>(p.device_count), "device");
    if (p.device_count == 0 && !p.unavailable_reason.empty()) out << " (" << p.unavailable_reason << ")";
    out << ", " << parse::printable_path(p.path);
    if (opt.timing) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", p.load_ms);
      out << ", loaded in " << buf << " ms";
    }
    out << "\n";
  }

  const auto& skipped = rt.skipped_plugins();
  if (!skipped.empty()) {
    out << "Skipped plugins (" << skipped.size() << "):\n";
    for (const auto& s : skipped)
      out << "  " << parse::printable_path(s.path) << ": " << parse::one_line(s.reason) << "\n";
  }
  if (opt.timing) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", opt.startup_ms);
    out << "Start-up (plugin search, load, device listing): " << buf << " ms\n";
  }
  out << "Num GPUs Available: " << rt.count("GPU") << "\n";
}

}  // namespace axon::devices_app
