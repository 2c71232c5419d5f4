#include "context.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>

#include <cctype>
#include <mutex>

namespace axon::api_detail {

Runtime& runtime() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!Runtime::initialised()) return Runtime::init(Config::from_environment());
  return Runtime::get();
}

Device& current_device() {
  Runtime& rt = runtime();
  if (Device* d = DeviceScope::current()) return *d;
  return rt.default_device();
}

std::string device_type(const std::string& type) {
  std::string t;
  for (char c : type) t += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return t == "CUDA" ? "GPU" : t;
}

void reconfigure(const Config& config, const std::string& tf_message) {
  Runtime& rt = runtime();
  try {
    rt.reconfigure(config);
  } catch (const RuntimeError&) {
    if (rt.devices_opened()) throw RuntimeError(tf_message);
    throw;
  }
}

}  // namespace axon::api_detail
