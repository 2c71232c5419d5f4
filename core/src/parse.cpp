#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <charconv>

namespace axon::parse {

int64_t integer(const std::string& name, const std::string& text, int64_t min, int64_t max) {
  // from_chars: no locale, no leading blanks or '+', and overflow is an error.
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || stop != end || v < min || v > max)
    throw UsageError(name + "='" + printable(text) + "' is not an integer from " + std::to_string(min) + " to " +
                     std::to_string(max));
  return v;
}

bool boolean(const std::string& name, const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (t == "1" || t == "true" || t == "yes" || t == "on") return true;
  if (t == "0" || t == "false" || t == "no" || t == "off") return false;
  throw UsageError(name + "='" + printable(text) + "' is not a boolean (1/0, true/false, yes/no, on/off)");
}

std::string printable(const std::string& text, size_t max) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < max; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (text.size() > max) out += "...";
  return out;
}

}  // namespace axon::parse
