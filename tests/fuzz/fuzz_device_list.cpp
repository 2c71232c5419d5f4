// The device-name parsers (--visible-devices, --device, --compare's names)
// on arbitrary text: a list of canonical names or one UsageError whose
// message is a single printable line.
#include "check_message.hpp"

#include <axon/device.hpp>
#include <axon/error.hpp>

#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const axon::DeviceSpec& s : axon::parse_device_list(text)) {
      // What a name parses to parses back to itself.
      const axon::DeviceSpec again = axon::parse_device_spec(s.canonical());
      if (again.type != s.type || again.index != s.index || s.index < 0) std::abort();
    }
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  try {
    axon::parse_device_spec(text);
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  return 0;
}
