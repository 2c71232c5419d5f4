// The roofline report of axon-bench-train: each profiled op's FLOPs and
// bytes (op_cost.hpp, summed by the profiler) set against two roofs measured
// in the same run, OpenBLAS sgemm's GFLOP/s and a STREAM bandwidth, and a
// third measured there too, the least time of an op call (call_floor.hpp).
// An op's bound time is its calls' floor plus max(flops / peak, bytes /
// bandwidth): compute-bound when its arithmetic intensity (FLOP per byte) is
// at least the machine balance (peak / bandwidth), memory-bound below it,
// call-bound when the calls' floor alone exceeds that time (a few kilobytes
// a call: the call, not the memory, sets how fast it can be). The bound is
// taken per op and layer (op_times_by_layer: one shape each), then summed
// per op and bound: an op whose layers fall under different bounds (an
// Inception cell's 1x1 and 3x3 convolutions) gets one row per bound.
#pragma once

#include <axon/profile.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace axon::bench {

struct Roofs {
  double peak_gflops = 0;    // the compute roof
  double bandwidth_gbs = 0;  // the memory roof
  double call_seconds = 0;   // the call floor, per call (0: not measured)
  double balance() const { return peak_gflops / bandwidth_gbs; }  // FLOP per byte
};

enum class Bound { compute, memory, call };
const char* bound_name(Bound b);

struct RooflineRow {
  std::string name;          // the op, with its bound in brackets where its layers fall under several
  OpTime op;                 // summed over the layers the row holds
  double intensity = 0;      // FLOP per byte (0 when the op moves nothing)
  double gflops = 0, gbs = 0;
  Bound bound = Bound::memory;
  double bound_seconds = 0;  // at the roof that applies
  double share = 0;          // bound_seconds / op.seconds
};

// Rows from the profiler's per-layer totals (op_times_by_layer), largest time first.
std::vector<RooflineRow> roofline_rows(const std::vector<OpTime>& by_layer, const Roofs& roofs);
// One row per op and layer, named "op layer" ("op" for calls outside a layer), in the given order.
std::vector<RooflineRow> roofline_layer_rows(const std::vector<OpTime>& by_layer, const Roofs& roofs);

// The table, one line per row, to stdout, and (legend) what its columns mean.
void print_roofline(const std::vector<RooflineRow>& rows, const Roofs& roofs, bool legend = true);

// An SVG of the roofline: log-log axes (FLOP per byte, GFLOP/s), the two
// roofs, one labelled point per op, coloured by its bound, with an area
// proportional to its share of the ops' time (ops without FLOPs sit on the
// bottom edge). Written atomically; `title` heads the plot.
void write_roofline_svg(const std::filesystem::path& file, const std::vector<RooflineRow>& rows, const Roofs& roofs,
                        const std::string& title);

}  // namespace axon::bench
