// The device under test through its C table alone (axon_device_api): memory
// that is freed on every path, copies, kernel calls, and errors as text.
#pragma once

#include "cases.hpp"

#include <axon/plugin_abi.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace axon::plugin_check {

// A call of the device table that failed; what() names the call and carries
// the status and the plugin's message.
class CallFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "AXON_OUT_OF_MEMORY: <the plugin's message>" ("no message" when empty).
std::string status_text(axon_status s, const axon_error& err);

// Device buffers of one check, all freed when it ends.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(const axon_device_api& api) : api_(api) {}
  ~DeviceBuffers();
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;

  void* allocate(size_t bytes);  // nullptr for 0 bytes (as the host does); throws CallFailed
  void upload(void* dst, const void* src, size_t bytes);
  void download(void* dst, const void* src, size_t bytes);
  void free_all();

 private:
  const axon_device_api& api_;
  std::vector<void*> held_;
};

void synchronize(const axon_device_api& api);  // throws CallFailed

// Runs case `c` with kernel `fn` on the device: inputs uploaded, outputs
// filled with NaN (0xEE for other dtypes) so an element left unwritten
// shows, the kernel called, the device synchronised, and what the op wrote
// read back. Throws CallFailed.
std::vector<HostTensor> run_on_device(const axon_device_api& api, axon_kernel_fn fn, const Case& c);

}  // namespace axon::plugin_check
