// Op dispatch with placement (docs/architecture.md, "How an op flows"):
//  1. an explicit DeviceScope on this thread wins;
//  2. otherwise the highest-priority visible device that has a kernel;
//  3. if the chosen device has no kernel for (op, dtype): soft placement runs
//     it on the CPU device with one warning naming op, device and reason,
//     copying inputs there and outputs back; with strict placement it is a
//     RuntimeError naming op, requested device and the devices that have it.
// With log_device_placement each distinct (op, layer, device) prints once:
//   "Executing op Conv2D in device /device:GPU:0"
#pragma once

#include <axon/tensor.hpp>

#include <string>
#include <vector>

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

struct OpCall {
  const char* op = "";
  std::string layer;              // for the placement log ("conv2d_1"); may be empty
  std::vector<const Tensor*> inputs;
  std::vector<Tensor*> outputs;   // allocated by the caller
  const void* attrs = nullptr;    // an axon_*_attrs struct or nullptr
};

// Chooses the device for `call` per the rules above (without running it).
Device& place(const OpCall& call);
// Places and runs. Throws RuntimeError on kernel errors.
void run(const OpCall& call);

}  // namespace axon
