// The number and boolean parsers behind every AXON_* variable: strict (the
// whole text, no sign tricks, no overflow), each failure a UsageError naming
// the variable and the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace axon::parse {

// A decimal integer in [min, max]; otherwise
// "NAME='TEXT' is not an integer from MIN to MAX".
int64_t integer(const std::string& name, const std::string& text, int64_t min, int64_t max);

// 1/0, true/false, yes/no, on/off, in any case; otherwise
// "NAME='TEXT' is not a boolean (1/0, true/false, yes/no, on/off)".
bool boolean(const std::string& name, const std::string& text);

// `text` fit for a one-line message: at most `max` bytes (then "..."), each
// byte that is not printable ASCII shown as '?'.
std::string printable(const std::string& text, size_t max = 64);

}  // namespace axon::parse
