// JSON text for the apps' --json outputs.
#pragma once

#include <string>

namespace axon::cli {

// `s` as a JSON string literal, quotes included, control characters escaped.
std::string json_string(const std::string& s);

}  // namespace axon::cli
