// Placement planning (axon-train --dry-run, --strict-placement): while a
// PlacementRecorder lives on a thread, every op dispatched from that thread is
// placed and recorded but not run (outputs keep whatever they held), and an op
// no device can run is recorded as missing instead of failing. One training
// step under a recorder lists every (op, dtype, layer) with its device and
// every fallback, so all missing kernels are known at once.
#pragma once

#include <axon/plugin_abi.h>

#include <string>
#include <vector>

namespace axon {

struct PlannedOp {
  std::string op;         // "Conv2D"
  axon_dtype dtype = AXON_FLOAT32;
  std::string layer;      // "conv2d_1", "dense_1/kernel"; may be empty
  std::string requested;  // the device the op was meant for ("/device:GPU:0")
  std::string device;     // the device it runs on; empty when none can run it
  bool fallback = false;  // device != requested (soft placement moved it)
  // A fused op that fell back: the ops of its decomposition that `requested`
  // has kernels for and that moved along with it ("BiasAdd, Relu, MaxPool").
  std::string moved_with;
  // The ops of that decomposition `requested` has no kernel for: what keeps
  // the layer off it.
  std::vector<std::string> parts_missing;
};

// What one recorded step placed, and what it found missing.
struct PlacementPlan {
  std::vector<PlannedOp> ops;
  std::vector<PlannedOp> missing;
  // The fusion pass's pairs ("conv2d + max_pooling2d -> _FusedConv2DMaxPool,
  // _FusedConv2DMaxPoolGrad"); each runs fused where its device has the ops.
  std::vector<std::string> fusions;
};

class PlacementRecorder {
 public:
  PlacementRecorder();   // starts recording on this thread (not nestable)
  ~PlacementRecorder();  // stops
  PlacementRecorder(const PlacementRecorder&) = delete;
  PlacementRecorder& operator=(const PlacementRecorder&) = delete;

  // Each distinct (op, dtype, layer, device) once, in first-seen order.
  const std::vector<PlannedOp>& ops() const { return ops_; }
  // The (op, dtype) pairs with no kernel on the device they were meant for,
  // each once, in first-seen order ("Conv2D float32"). Fused ops are
  // optional and never listed themselves: one that fell back lists the ops
  // of its decomposition the requested device lacks.
  std::vector<PlannedOp> missing() const;
  // True while a recorder is active on the calling thread.
  static PlacementRecorder* current();

  void record(PlannedOp op);  // used by dispatch
  // The fallbacks recorded for `op` in `layer` do not need the part `part`
  // of its decomposition (the call left out the output it gives): used by dispatch.
  void leave_out_part(const std::string& op, const std::string& layer, const std::string& part);

 private:
  PlacementRecorder* previous_;
  std::vector<PlannedOp> ops_;
};

}  // namespace axon
