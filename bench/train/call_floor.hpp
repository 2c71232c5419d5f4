// The least time the profiler sees for an op call: a Scale of one float
// through dispatch, timed as the training step's ops are (launch, wait,
// read the clock). The roofline report's third roof: an op that moves a few
// kilobytes cannot take less than this, whatever the memory's bandwidth.
#pragma once

#include <axon/device.hpp>

namespace axon::bench {

// Seconds per call: the fastest of `rounds` rounds of `calls` calls each, on
// `device`. Resets the profiler's op times (take them first).
double call_floor_seconds(Device& device, int calls = 2000, int rounds = 5);

}  // namespace axon::bench
