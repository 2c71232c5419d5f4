// Op dispatch with placement (docs/architecture.md, "How an op flows"):
//  1. an explicit DeviceScope on this thread wins;
//  2. otherwise the highest-priority visible device that has a kernel;
//  3. if the chosen device has no kernel for (op, dtype): soft placement runs
//     it on the CPU device with one warning naming op, device and reason,
//     copying inputs there and outputs back; with strict placement it is a
//     RuntimeError naming op, requested device and the devices that have it.
// Before the kernel, the call is checked once against the op table
// (op_validate.hpp): a malformed call is a RuntimeError naming op and tensors.
// With log_device_placement each distinct (op, layer, device) prints once:
//   "Executing op Conv2D (conv2d_1) in device /device:GPU:0"
// With check_numerics every float output is read back after the op, and the
// first NaN or Inf is a RuntimeError naming op, layer and device.
// Under a PlacementRecorder (placement_plan.hpp) ops are placed and recorded,
// not run.
#pragma once

#include <axon/op_table.hpp>
#include <axon/tensor.hpp>

#include <span>
#include <string_view>

namespace axon {

// Places ops on `device` for the lifetime of the scope (nestable, per thread).
class DeviceScope {
 public:
  explicit DeviceScope(Device& device);
  explicit DeviceScope(const std::string& device_name);  // Runtime::get().device(name)
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  static Device* current();  // nullptr when no scope is active

 private:
  Device* previous_;
};

// The tensors are the caller's and must outlive the call (spans, so a call
// allocates nothing on the host).
struct OpCall {
  OpId op = OpId::Identity;
  std::string_view layer;                   // for the placement log ("conv2d_1"); may be empty
  std::span<const Tensor* const> inputs;
  std::span<Tensor* const> outputs;         // allocated by the caller
  const void* attrs = nullptr;              // the op's axon_*_attrs struct or nullptr
};

// Chooses the device for `call` per the rules above (without running it).
Device& place(const OpCall& call);
// Places and runs. Throws RuntimeError on kernel errors.
void run(const OpCall& call);
// A layer about to run `fused_op` on `chosen` (under its own DeviceScope)
// because the op's plain path fell back there: under a PlacementRecorder this
// records the fused op as that fallback, with the ops of its decomposition
// that moved along and those the requested device lacks. No-op otherwise.
void note_fused_path(OpId fused_op, Device& chosen, std::string_view layer, axon_dtype dtype);
// With log_device_placement: prints `line` once per process (the fusion
// pass's decisions, next to the placement lines).
void log_placement_note(const std::string& line);

}  // namespace axon
