#include "placement_report.hpp"

#include <axon/op_table.hpp>

#include <algorithm>
#include <map>
#include <vector>

namespace axon::train_app {
namespace {

// The layers of the recorded ops of (op, dtype) meant for `device`.
std::string layers_of(const PlacementPlan& plan, const PlannedOp& m) {
  std::vector<std::string> layers;
  for (const PlannedOp& o : plan.ops) {
    const bool same_op = o.op == m.op || std::find(o.parts_missing.begin(), o.parts_missing.end(), m.op) != o.parts_missing.end();
    if (same_op && o.dtype == m.dtype && o.requested == m.requested && !o.layer.empty() &&
        std::find(layers.begin(), layers.end(), o.layer) == layers.end())
      layers.push_back(o.layer);
  }
  std::string s;
  for (const auto& l : layers) (s += s.empty() ? "" : ", ") += l;
  return s;
}

}  // namespace

std::string missing_kernels_message(const PlacementPlan& plan, const std::string& device) {
  if (plan.missing.empty()) return {};
  std::string s = std::to_string(plan.missing.size()) + (plan.missing.size() == 1 ? " kernel" : " kernels") +
                  " this model needs " + (plan.missing.size() == 1 ? "is" : "are") + " missing on " + device + ": ";
  for (size_t i = 0; i < plan.missing.size(); ++i) {
    const PlannedOp& m = plan.missing[i];
    s += (i ? "; " : "") + m.op + " " + dtype_name(m.dtype);
    if (const std::string layers = layers_of(plan, m); !layers.empty()) s += " (" + layers + ")";
  }
  return s;
}

void print_placement_plan(std::FILE* out, const PlacementPlan& plan, const std::string& device) {
  size_t op_w = 2, layer_w = 5;
  for (const PlannedOp& o : plan.ops) {
    op_w = std::max(op_w, o.op.size());
    layer_w = std::max(layer_w, o.layer.size());
  }
  std::fprintf(out, "Placement of one training step meant for %s (nothing was run):\n", device.c_str());
  for (const std::string& f : plan.fusions) std::fprintf(out, "  fused by the fusion pass: %s\n", f.c_str());
  std::fprintf(out, "  %-*s  %-7s  %-*s  %s\n", static_cast<int>(op_w), "op", "dtype", static_cast<int>(layer_w), "layer",
               "device");
  for (const PlannedOp& o : plan.ops) {
    std::string where = o.device.empty() ? "(none: no device that may run it has a kernel)" : o.device;
    if (o.fallback && !o.device.empty()) where += " (fallback: no kernel on " + o.requested + ")";
    std::fprintf(out, "  %-*s  %-7s  %-*s  %s\n", static_cast<int>(op_w), o.op.c_str(), dtype_name(o.dtype),
                 static_cast<int>(layer_w), o.layer.c_str(), where.c_str());
    if (!o.moved_with.empty())
      std::fprintf(out, "  %*s    moves %s along: %s has them, but they run inside %s\n", static_cast<int>(op_w), "",
                   o.moved_with.c_str(), o.requested.c_str(), o.op.c_str());
  }
  const std::string missing = missing_kernels_message(plan, device);
  std::fprintf(out, "%s\n", missing.empty() ? ("Every kernel this model needs is on " + device + ".").c_str()
                                            : (missing + ".").c_str());
}

}  // namespace axon::train_app
