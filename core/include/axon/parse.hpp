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

// `text` fit for a one-line message: at most `max` characters (then "...");
// each control character (C0, DEL, C1), line or paragraph separator and
// bidirectional override, and each byte that is not part of valid UTF-8,
// shown as '?'. Printable UTF-8 ("données") is kept. The one cleaning of
// every value echoed to the user: flag values, variables, file names.
std::string printable(const std::string& text, size_t max = 64);

// The longest path Linux opens (PATH_MAX, 4096 bytes with the terminator):
// file names are echoed whole up to it, as printable(path, kMaxPathEcho).
inline constexpr size_t kMaxPathEcho = 4096;
std::string printable_path(const std::string& path);

// A whole message or log line made one printable line (printable without a
// length cut): what the apps' error lines and the log print.
std::string one_line(const std::string& message);

}  // namespace axon::parse
