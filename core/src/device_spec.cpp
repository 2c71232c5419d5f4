// Device names: "/device:GPU:1", "device:gpu:1", "/gpu:1", "gpu:1", "cuda:1",
// "GPU" (index 0); case-insensitive; "CUDA" is the GPU type.
#include <axon/device.hpp>
#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cctype>

namespace axon {

std::string DeviceSpec::canonical() const { return "/device:" + type + ":" + std::to_string(index); }

DeviceSpec parse_device_spec(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("bad device name '" + parse::printable(text) + "': " + why +
                      " (expected /device:TYPE:N or TYPE:N, e.g. /device:GPU:0, cpu:1)");
  };
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!s.empty() && s[0] == '/') s.erase(0, 1);
  if (s.rfind("DEVICE:", 0) == 0) s.erase(0, 7);
  if (s.empty()) throw bad("empty");
  DeviceSpec spec;
  size_t colon = s.find(':');
  spec.type = s.substr(0, colon);
  if (spec.type.empty()) throw bad("no device type");
  for (char c : spec.type)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      throw bad("device type has a '" + parse::printable(std::string(1, c)) + "'");
  if (spec.type == "CUDA") spec.type = "GPU";
  if (colon != std::string::npos) {
    std::string idx = s.substr(colon + 1);
    if (idx.empty() || idx.size() > 6) throw bad("index must be a number");
    for (char c : idx)
      if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("index must be a number");
    spec.index = std::stoi(idx);
  }
  return spec;
}

std::vector<DeviceSpec> parse_device_list(const std::string& list) {
  std::vector<DeviceSpec> out;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    out.push_back(parse_device_spec(item));
  }
  return out;
}

}  // namespace axon
