// Fused ops run as their parts: where a device lacks a fused op's kernel but
// has its parts, dispatch runs the parts there instead (the op table's
// decomposes_into, in that order, with a temporary where the composition
// needs one). The results equal the fused op's within rounding, and the
// composition is the one the layers would have written themselves.
#pragma once

#include <axon/dispatch.hpp>

namespace axon {

// Whether `op` can be run as its parts: every optional op but the
// convolution+pooling pair, whose argmax carries state from forward to
// backward (the fusion pass picks that pair only where a device has it).
bool lowerable(OpId op);

// Runs `call` as its parts, each dispatched as usual under a DeviceScope of
// `device` (so a part the device lacks still falls back on its own).
void run_lowered(const OpCall& call, Device& device);

}  // namespace axon
