// The least time the profiler sees for an op call: a Scale of one float
// through dispatch, timed as the training step's ops are (launch, wait,
// read the clock). The roofline report's third roof: an op that moves a few
// kilobytes cannot take less than this, whatever the memory's bandwidth.
// Beside it, what such calls take cold, printed for the few-kilobyte ops.
#pragma once

#include <axon/device.hpp>

namespace axon::bench {

// Seconds per call: the fastest of `rounds` rounds of `calls` calls each, on
// `device`. Resets the profiler's op times (take them first).
double call_floor_seconds(Device& device, int calls = 2000, int rounds = 5);

// Seconds per call with the call's code and data out of every cache, as an
// op meets them after ops that swept megabytes (the step's tail after its
// convolutions): the median of `calls` calls, each after a sweep over twice
// the last-level cache, of that Scale and of the trainer's loss over 64 x 10
// logits (more code of its own: the exponentials). Resets the op times too.
struct ColdCalls {
  double scale_seconds = 0;
  double loss_seconds = 0;
};
ColdCalls cold_call_seconds(Device& device, int calls = 20);

}  // namespace axon::bench
