// The two renderings of the device listing: for people and for scripts.
#pragma once

#include <axon/runtime.hpp>

#include <ostream>

namespace axon::devices_app {

struct ReportOptions {
  bool ops = false;       // list each device's kernels (opens the devices)
  bool timing = false;    // per-plugin load time and total start-up time
  double startup_ms = 0;  // Runtime::init wall time
};

void write_text(std::ostream& out, const Runtime& rt, const ReportOptions& opt);
void write_json(std::ostream& out, const Runtime& rt, const ReportOptions& opt);

// The op table as Markdown (--op-table; docs/ops.md).
void write_op_table(std::ostream& out);

// "23.4 GiB", "512 MiB", "unknown" for 0.
std::string human_bytes(uint64_t bytes);

}  // namespace axon::devices_app
