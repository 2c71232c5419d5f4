#include "collective_messages.hpp"

#include <cstdio>

namespace axon::distribute {

std::string byte_count(size_t bytes) {
  const std::string digits = std::to_string(bytes);
  std::string s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s + " bytes";
}

std::string timed_out(const std::string& where, double timeout_s) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
  return where + " did not complete within " + seconds + " s (--collective-timeout): another worker died or stalled";
}

}  // namespace axon::distribute
