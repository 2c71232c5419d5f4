// Per-op wall time, FLOPs and bytes, for "where does the time go" and
// roofline reports. Off by default and free when off; when on, dispatch
// synchronizes the device after each op so the time of asynchronous kernels
// is charged to the op that queued them, and counts each call's FLOPs and
// bytes (op_cost.hpp).
#pragma once

#include <axon/op_cost.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace axon {

void set_op_profiling(bool on);
bool op_profiling();

struct OpTime {
  std::string op;
  std::string device;
  std::string layer;  // op_times_by_layer() only: the layer the calls named (empty: none)
  int64_t calls = 0;
  double seconds = 0;
  int64_t flops = 0;  // summed over the calls (op_cost.hpp)
  int64_t bytes = 0;
};

// Totals since the last reset, one per op and device, largest time first.
std::vector<OpTime> op_times();
// The same, one per op, device and layer, largest time first. An op's calls
// in one layer have one shape each step, hence one arithmetic intensity,
// which a roofline needs (an op's total over layers of different shapes
// has an intensity none of its calls has).
std::vector<OpTime> op_times_by_layer();
void reset_op_times();

// Used by dispatch: adds one call of `op` on `device` for `layer` taking
// `seconds` and costing `cost`.
void record_op_time(const char* op, const std::string& device, std::string_view layer, double seconds,
                    const OpCost& cost);

}  // namespace axon
