// The device under test through its C table alone (axon_device_api): memory
// that is freed on every path, copies, kernel calls, and errors as text.
#pragma once

#include "cases.hpp"

#include <axon/client.hpp>
#include <axon/plugin_abi.h>

#include <string>
#include <vector>

namespace axon::plugin_check {

// The device table's calls through the SDK's calling side (axon/client.hpp):
// a failed call throws CallFailed naming it, with the status and the
// plugin's message; DeviceMemory frees a check's buffers on every path.
using client::CallFailed;
using client::DeviceMemory;
using client::status_text;
using client::synchronize;

// Runs case `c` with kernel `fn` on the device: inputs uploaded, outputs
// filled with NaN (0xEE for other dtypes) so an element left unwritten
// shows, the kernel called, the device synchronised, and what the op wrote
// read back. Throws CallFailed; a call the kernel declines
// (AXON_UNIMPLEMENTED) keeps that status only if its outputs are untouched.
std::vector<HostTensor> run_on_device(const axon_device_api& api, axon_kernel_fn fn, const Case& c);

}  // namespace axon::plugin_check
