// The device-name parsers (--visible-devices, --device, --compare's names)
// on arbitrary text: a list of canonical names or one UsageError whose
// message is a single printable line.
#include <axon/device.hpp>
#include <axon/error.hpp>

#include <cstdlib>
#include <string>

namespace {

void check_message(const axon::UsageError& e) {
  for (const char* p = e.what(); *p; ++p)
    if (*p == '\n' || *p == '\r') std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    for (const axon::DeviceSpec& s : axon::parse_device_list(text)) {
      // What a name parses to parses back to itself.
      const axon::DeviceSpec again = axon::parse_device_spec(s.canonical());
      if (again.type != s.type || again.index != s.index || s.index < 0) std::abort();
    }
  } catch (const axon::UsageError& e) {
    check_message(e);
  }
  try {
    axon::parse_device_spec(text);
  } catch (const axon::UsageError& e) {
    check_message(e);
  }
  return 0;
}
