// Internal: plugins built against ABI 1.x (entry point "axon_plugin_init",
// which fills a table in the host's memory) loaded under ABI 2. The shim
// calls the old entry point with room to spare, and hands the host ABI 2
// tables whose functions translate each call: the 80-byte ABI 1 tensors,
// the device contexts of collectives. Events and asynchronous copies of a
// 1.10 plugin are not offered (they are optional): its devices are used
// synchronously, as every 1.x host did.
#pragma once

#include <axon/plugin_abi.h>

namespace axon::abi1 {

// ABI 1's entry point.
inline constexpr const char* kEntrySymbol = "axon_plugin_init";

// The newest ABI 1 minor, the one the host offers a 1.x plugin.
inline constexpr uint32_t kLastMinor = 10;

using InitFn = axon_status (*)(const axon_host_api* host, void* table, axon_error* err);

// Calls an ABI 1 entry point and returns the ABI 2 table standing for the
// plugin's (kept for the process) and the 1.x minor it was built for, or an
// error with `err` filled: the plugin's own failure, or a table the shim
// refuses (another major).
axon_status load(InitFn init, const axon_host_api* host, const axon_plugin_api** api, uint32_t* minor,
                 axon_error* err);

}  // namespace axon::abi1
