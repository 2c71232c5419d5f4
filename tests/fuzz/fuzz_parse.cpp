// The number and boolean parsers behind the AXON_* variables, and
// Config::from_environment over them, on arbitrary text: a value within the
// range or one single-line UsageError.
#include "check_message.hpp"

#include <axon/config.hpp>
#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first 16 bytes choose the range; the rest is the text.
  int64_t bounds[2] = {0, 0};
  if (size >= sizeof bounds) {
    std::memcpy(bounds, data, sizeof bounds);
    data += sizeof bounds;
    size -= sizeof bounds;
  }
  const int64_t lo = bounds[0] < bounds[1] ? bounds[0] : bounds[1];
  const int64_t hi = bounds[0] < bounds[1] ? bounds[1] : bounds[0];
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const int64_t v = axon::parse::integer("AXON_X", text, lo, hi);
    if (v < lo || v > hi) std::abort();
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  try {
    axon::parse::boolean("AXON_X", text);
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  // The variables themselves (a NUL ends what setenv can hold).
  const std::string value = text.substr(0, text.find('\0'));
  for (const char* name : {"AXON_NUM_THREADS", "AXON_CPU_DEVICE_COUNT", "AXON_FUSED_OPS", "AXON_GPU_MEMORY_LIMIT_MB",
                           "AXON_LOG_LEVEL", "AXON_PLUGIN_PATH", "AXON_VISIBLE_DEVICES"}) {
    ::setenv(name, value.c_str(), 1);
    try {
      const axon::Config c = axon::Config::from_environment();
      c.validate();
    } catch (const axon::UsageError& e) {
      axon::fuzz::check_message(e);
    }
    ::unsetenv(name);
  }
  return 0;
}
