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

namespace {

// The length of the UTF-8 sequence at text[i] and its code point, or 0 for a
// byte that starts no valid sequence (stray continuation, overlong form,
// surrogate, beyond U+10FFFF, cut short).
size_t utf8_sequence(const std::string& text, size_t i, char32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = b(i);
  cp = c;
  if (c < 0x80) return 1;
  const size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  cp &= 0x7f >> n;  // the lead byte's payload bits
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  const char32_t min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

// Whether a character is shown as it is: not one that moves the cursor, ends
// the line or reorders what follows.
bool shown(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return false;  // C0, DEL, C1 (ESC, CSI, ...)
  if (cp == 0x2028 || cp == 0x2029) return false;             // line and paragraph separators
  if (cp >= 0x202a && cp <= 0x202e) return false;             // bidirectional embeddings, overrides
  if (cp >= 0x2066 && cp <= 0x2069) return false;             // bidirectional isolates
  return true;
}

}  // namespace

std::string printable(const std::string& text, size_t max) {
  std::string out;
  size_t i = 0, count = 0;
  for (; i < text.size() && count < max; ++count) {
    char32_t cp = 0;
    const size_t n = utf8_sequence(text, i, cp);
    if (n == 0 || !shown(cp)) {
      out += '?';
      i += n == 0 ? 1 : n;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

std::string printable_path(const std::string& path) { return printable(path, kMaxPathEcho); }

std::string one_line(const std::string& message) { return printable(message, std::string::npos); }

}  // namespace axon::parse
