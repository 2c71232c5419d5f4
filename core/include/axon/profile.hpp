// Per-op wall time, FLOPs and bytes, for "where does the time go" and
// roofline reports. Off by default and free when off; when on, dispatch
// synchronizes the device after each op so the time of asynchronous kernels
// is charged to the op that queued them, and counts each call's FLOPs and
// bytes (op_cost.hpp).
#pragma once

#include <axon/op_cost.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace axon {

void set_op_profiling(bool on);
bool op_profiling();

struct OpTime {
  std::string op;
  std::string device;
  int64_t calls = 0;
  double seconds = 0;
  int64_t flops = 0;  // summed over the calls (op_cost.hpp)
  int64_t bytes = 0;
};

// Totals since the last reset, largest time first.
std::vector<OpTime> op_times();
void reset_op_times();

// Used by dispatch: adds one call of `op` on `device` taking `seconds` and
// costing `cost`.
void record_op_time(const char* op, const std::string& device, double seconds, const OpCost& cost);

}  // namespace axon
