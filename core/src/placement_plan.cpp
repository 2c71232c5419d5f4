// PlacementRecorder: what dispatch records while a dry run plans placement.
#include <axon/error.hpp>
#include <axon/op_table.hpp>
#include <axon/placement_plan.hpp>

#include <algorithm>

namespace axon {
namespace {
thread_local PlacementRecorder* t_recorder = nullptr;
}  // namespace

PlacementRecorder::PlacementRecorder() : previous_(t_recorder) {
  if (previous_ != nullptr) throw RuntimeError("a PlacementRecorder is already recording on this thread");
  t_recorder = this;
}

PlacementRecorder::~PlacementRecorder() { t_recorder = previous_; }

PlacementRecorder* PlacementRecorder::current() { return t_recorder; }

void PlacementRecorder::record(PlannedOp op) {
  // A fused op noted as a fallback is then run under its layer's own scope:
  // the same (op, dtype, layer, device) again, which adds nothing.
  const bool seen = std::any_of(ops_.begin(), ops_.end(), [&](const PlannedOp& o) {
    return o.op == op.op && o.dtype == op.dtype && o.layer == op.layer && o.device == op.device &&
           (o.requested == op.requested || o.fallback);
  });
  if (!seen) ops_.push_back(std::move(op));
}

void PlacementRecorder::leave_out_part(const std::string& op, const std::string& layer, const std::string& part) {
  for (PlannedOp& o : ops_) {
    if (o.op != op || o.layer != layer || !o.fallback) continue;
    o.parts_missing.erase(std::remove(o.parts_missing.begin(), o.parts_missing.end(), part), o.parts_missing.end());
    // moved_with is "A, B, C": the list again without `part`.
    std::string kept;
    for (size_t start = 0; start < o.moved_with.size();) {
      size_t end = o.moved_with.find(", ", start);
      if (end == std::string::npos) end = o.moved_with.size();
      const std::string name = o.moved_with.substr(start, end - start);
      if (name != part) (kept += kept.empty() ? "" : ", ") += name;
      start = end + 2;
    }
    o.moved_with = kept;
  }
}

std::vector<PlannedOp> PlacementRecorder::missing() const {
  std::vector<PlannedOp> out;
  auto add = [&](const PlannedOp& o) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const PlannedOp& m) {
      return m.op == o.op && m.dtype == o.dtype && m.requested == o.requested;
    });
    if (!seen) out.push_back(o);
  };
  for (const PlannedOp& o : ops_) {
    if (!o.fallback) continue;  // it runs where it was meant to
    const OpSchema* s = find_op(o.op);
    if (s == nullptr || !op_is_optional(*s)) {
      add(o);
      continue;
    }
    for (const std::string& part : o.parts_missing) {
      PlannedOp p = o;
      p.op = part;
      p.moved_with.clear();
      p.parts_missing.clear();
      add(p);
    }
  }
  return out;
}

}  // namespace axon
