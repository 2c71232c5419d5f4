// The listing for scripts: one JSON object (docs/cli.md lists the fields).
#include "report.hpp"

#include <axon/json_text.hpp>

#include <cstdio>
#include <string>

namespace axon::devices_app {
namespace {

std::string quote(const std::string& s) { return cli::json_string(s); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Writes `items` as a JSON array, one element per line.
template <class C, class F>
void array(std::ostream& out, const C& items, F&& write_one) {
  out << "[";
  bool first = true;
  for (const auto& item : items) {
    out << (first ? "\n    " : ",\n    ");
    first = false;
    write_one(item);
  }
  out << (first ? "]" : "\n  ]");
}

}  // namespace

void write_json(std::ostream& out, const Runtime& rt, const ReportOptions& opt) {
  out << "{\n  \"devices\": ";
  array(out, rt.devices(), [&](Device* d) {
    const axon_device_props& p = d->props();
    out << "{\"name\": " << quote(d->name()) << ", \"type\": " << quote(d->type()) << ", \"index\": " << d->index()
        << ", \"physical_name\": " << quote(d->original_name()) << ", \"physical_id\": " << d->physical_id()
        << ", \"plugin\": " << quote(d->plugin_name()) << ", \"priority\": " << d->priority()
        << ", \"description\": " << quote(p.name) << ", \"memory_total\": " << p.memory_total
        << ", \"memory_free\": " << p.memory_free << ", \"compute_capability\": "
        << quote(p.compute_major ? std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor) : "")
        << ", \"pci_bus_id\": " << quote(p.pci_bus_id) << ", \"uuid\": " << quote(p.uuid)
        << ", \"threads\": " << p.threads << ", \"properties\": " << quote(p.description);
    if (opt.ops) {
      out << ", \"ops\": ";
      try {
        const auto kernels = d->kernels();
        out << "[";
        for (size_t i = 0; i < kernels.size(); ++i) out << (i ? ", " : "") << quote(op_name(kernels[i].op));
        out << "], \"kernels\": [";
        for (size_t i = 0; i < kernels.size(); ++i) {
          out << (i ? ", " : "") << "{\"op\": " << quote(op_name(kernels[i].op)) << ", \"dtypes\": [";
          for (size_t j = 0; j < kernels[i].dtypes.size(); ++j) out << (j ? ", " : "") << quote(dtype_name(kernels[i].dtypes[j]));
          out << "]}";
        }
        out << "], \"unknown_ops\": [";
        const auto unknown = d->unknown_ops();
        for (size_t i = 0; i < unknown.size(); ++i) out << (i ? ", " : "") << quote(unknown[i]);
        out << "]";
      } catch (const std::exception& e) {
        out << "null, \"open_error\": " << quote(e.what());
      }
    }
    out << "}";
  });
  out << ",\n  \"excluded_devices\": ";
  array(out, rt.excluded(), [&](const ExcludedDevice& e) {
    out << "{\"name\": " << quote(e.name) << ", \"plugin\": " << quote(e.plugin)
        << ", \"physical_id\": " << e.physical_id << ", \"reason\": " << quote(e.reason) << "}";
  });
  out << ",\n  \"plugins\": ";
  array(out, rt.plugins(), [&](const PluginInfo& p) {
    out << "{\"name\": " << quote(p.name) << ", \"version\": " << quote(p.version)
        << ", \"device_type\": " << quote(p.device_type) << ", \"priority\": " << p.priority
        << ", \"path\": " << quote(p.path) << ", \"device_count\": " << p.device_count
        << ", \"unavailable_reason\": " << quote(p.unavailable_reason) << ", \"load_ms\": " << number(p.load_ms)
        << ", \"abi\": " << quote(p.abi) << "}";
  });
  out << ",\n  \"skipped_plugins\": ";
  array(out, rt.skipped_plugins(), [&](const SkippedPlugin& s) {
    out << "{\"path\": " << quote(s.path) << ", \"reason\": " << quote(s.reason) << "}";
  });
  const Config& c = rt.config();
  out << ",\n  \"visible_devices\": " << (c.visible_devices ? quote(*c.visible_devices) : std::string("null"))
      << ",\n  \"visible_devices_source\": " << (c.visible_devices ? quote(c.visible_devices_source) : "null")
      << ",\n  \"startup_ms\": " << number(opt.startup_ms) << ",\n  \"num_gpus\": " << rt.count("GPU") << "\n}\n";
}

}  // namespace axon::devices_app
