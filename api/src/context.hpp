// What every part of the API shares: the process's runtime, started on first
// use from the AXON_* variables as the apps start it (or the one the program
// started itself), and the device an eager op or a model goes to.
#pragma once

#include <axon/runtime.hpp>

#include <string>

namespace axon::api_detail {

Runtime& runtime();
// The scope's device (axon::device, a strategy's), else the default device.
Device& current_device();
// "GPU" from "gpu", "cuda", "GPU"; empty stays empty (all types).
std::string device_type(const std::string& type);
// Applies `config` (Runtime::reconfigure), throwing RuntimeError(`tf_message`)
// when it changes devices that are already initialised.
void reconfigure(const Config& config, const std::string& tf_message);

}  // namespace axon::api_detail
