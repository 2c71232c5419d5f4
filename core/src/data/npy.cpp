// The .npy header is a Python literal: a small tokenizer reads the three keys
// NumPy writes, refusing everything else. Limits are checked before any
// allocation: the header's length (10,000 bytes, as NumPy), the data's size.
#include <axon/data/npy.hpp>
#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace axon::data {
namespace {

[[noreturn]] void bad(const std::string& what, const std::string& why) {
  throw UsageError(what + ": " + why);
}

// A cursor over the header's dict literal.
class Literal {
 public:
  Literal(std::string_view text, const std::string& what) : s_(text), what_(what) {}

  void skip_space() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\n' || s_[p_] == '\r')) ++p_;
  }
  bool take(char c) {
    skip_space();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* where) {
    if (!take(c)) fail(std::string("expected '") + c + "' " + where);
  }
  char peek() {
    skip_space();
    return p_ < s_.size() ? s_[p_] : '\0';
  }
  std::string string() {
    skip_space();
    if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"')) fail("expected a quoted string");
    const char quote = s_[p_++];
    std::string out;
    while (p_ < s_.size() && s_[p_] != quote) {
      if (s_[p_] == '\\') fail("escapes are not expected in a .npy header");
      out += s_[p_++];
    }
    if (p_ >= s_.size()) fail("a string is not closed");
    ++p_;
    return out;
  }
  std::string word() {
    skip_space();
    std::string out;
    while (p_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[p_]))) out += s_[p_++];
    return out;
  }
  int64_t integer() {
    skip_space();
    bool negative = false;
    if (p_ < s_.size() && s_[p_] == '-') {
      negative = true;
      ++p_;
    }
    if (p_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[p_]))) fail("expected a dimension (an integer)");
    int64_t v = 0;
    while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      if (v > (int64_t{1} << 50)) fail("a dimension is too large");
      v = v * 10 + (s_[p_++] - '0');
    }
    if (p_ < s_.size() && s_[p_] == 'L') ++p_;  // Python 2's long
    if (negative) fail("a dimension is negative (-" + std::to_string(v) + ")");
    return v;
  }
  bool at_end() {
    skip_space();
    return p_ == s_.size();
  }
  [[noreturn]] void fail(const std::string& why) const {
    bad(what_, "bad .npy header: " + why + " at byte " + std::to_string(p_) + " of '" +
                   parse::printable(std::string(s_.substr(0, 120))) + (s_.size() > 120 ? "...'" : "'"));
  }

 private:
  std::string_view s_;
  const std::string& what_;
  size_t p_ = 0;
};

void parse_descr(NpyHeader& h, const std::string& what) {
  const std::string& d = h.descr;
  if (d.size() < 2) bad(what, "unknown dtype '" + parse::printable(d) + "'");
  size_t i = 0;
  const char order = d[0];
  if (order == '<' || order == '>' || order == '|' || order == '=') {
    h.big_endian = order == '>';
    i = 1;
  }
  h.kind = d[i];
  if (h.kind == 'O')
    bad(what, "holds an object array (dtype '" + parse::printable(d) +
                  "'), which only pickle can read; refused, as NumPy refuses it with allow_pickle=False");
  const std::string size = d.substr(i + 1);
  if (size.empty() || size.size() > 3 || !std::all_of(size.begin(), size.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    bad(what, "dtype '" + parse::printable(d) + "' is not a number type axon reads");
  h.item_bytes = std::stoi(size);
  const bool power_of_two = h.item_bytes > 0 && h.item_bytes <= 16 && (h.item_bytes & (h.item_bytes - 1)) == 0;
  if (std::strchr("uifbc", h.kind) == nullptr || !power_of_two)
    bad(what, "dtype '" + parse::printable(d) + "' is not a number type axon reads");
}

}  // namespace

uint64_t NpyHeader::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string NpyHeader::dtype_name() const {
  std::string base;
  switch (kind) {
    case 'u': base = "uint"; break;
    case 'i': base = "int"; break;
    case 'f': base = "float"; break;
    case 'c': base = "complex"; break;
    case 'b': return "bool";
    default: return descr;
  }
  base += std::to_string(item_bytes * 8);
  if (big_endian && item_bytes > 1) base += " (big-endian)";
  return base;
}

NpyHeader parse_npy_header(std::string_view bytes, const std::string& what, uint64_t max_data_bytes) {
  static constexpr char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    bad(what, "not a .npy file (it does not start with \\x93NUMPY)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  const auto minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    bad(what, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not one NumPy writes (1.0, 2.0, 3.0)");
  const auto u8 = [&](size_t i) { return uint64_t{static_cast<unsigned char>(bytes[i])}; };
  uint64_t length = 0, start = 0;
  if (major == 1) {
    length = u8(8) | u8(9) << 8;
    start = 10;
  } else {
    if (bytes.size() < 12) bad(what, "truncated .npy header");
    length = u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24;
    start = 12;
  }
  if (length > kMaxNpyHeaderBytes)
    bad(what, "the .npy header claims " + std::to_string(length) + " bytes, more than NumPy's limit of " +
                  std::to_string(kMaxNpyHeaderBytes));
  if (bytes.size() < start + length) bad(what, "truncated: ends inside the .npy header");
  NpyHeader h;
  h.header_bytes = start + length;
  Literal lit(bytes.substr(start, length), what);
  bool has_descr = false, has_order = false, has_shape = false;
  lit.expect('{', "at the start");
  while (!lit.take('}')) {
    const std::string key = lit.string();
    lit.expect(':', "after a key");
    if (key == "descr" && !has_descr) {
      has_descr = true;
      if (lit.peek() == '[') bad(what, "holds a structured array (a list of fields as its dtype); axon reads plain arrays");
      h.descr = lit.string();
      parse_descr(h, what);
    } else if (key == "fortran_order" && !has_order) {
      has_order = true;
      const std::string v = lit.word();
      if (v != "True" && v != "False") lit.fail("fortran_order must be True or False");
      h.fortran_order = v == "True";
    } else if (key == "shape" && !has_shape) {
      has_shape = true;
      lit.expect('(', "to start the shape");
      while (!lit.take(')')) {
        if (h.shape.size() >= 32) lit.fail("more than 32 dimensions");
        h.shape.push_back(lit.integer());
        if (!lit.take(',')) {
          lit.expect(')', "to end the shape");
          break;
        }
      }
    } else {
      lit.fail("unexpected or repeated key '" + parse::printable(key) + "'");
    }
    if (!lit.take(',')) {
      lit.expect('}', "to end the header");
      break;
    }
  }
  if (!lit.at_end()) lit.fail("text after the dict");
  if (!has_descr || !has_order || !has_shape) lit.fail("it lacks one of 'descr', 'fortran_order', 'shape'");
  uint64_t bytes_total = static_cast<uint64_t>(h.item_bytes);
  for (int64_t d : h.shape) {
    if (d != 0 && bytes_total > max_data_bytes / static_cast<uint64_t>(d))
      bad(what, "the shape " + [&] {
        std::string s = "(";
        for (size_t i = 0; i < h.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(h.shape[i]);
        return s + ")";
      }() + " of " + h.dtype_name() + " promises more than " + std::to_string(max_data_bytes) + " data bytes, the limit");
    bytes_total *= static_cast<uint64_t>(d);
  }
  return h;
}

NpyHeader read_npy_header(ByteStream& in, uint64_t max_data_bytes) {
  std::string bytes(12, '\0');
  in.read_exactly(bytes.data(), 10, ".npy header");
  if (std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0 && bytes[6] != 1) in.read_exactly(bytes.data() + 10, 2, ".npy header");
  else bytes.resize(10);
  // The length field, read again by the parser; bounded before the read.
  const auto u8 = [&](size_t i) { return uint64_t{static_cast<unsigned char>(bytes[i])}; };
  uint64_t length = bytes.size() == 10 ? (u8(8) | u8(9) << 8) : (u8(8) | u8(9) << 8 | u8(10) << 16 | u8(11) << 24);
  if (std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0 && length <= kMaxNpyHeaderBytes) {
    const size_t start = bytes.size();
    bytes.resize(start + length);
    in.read_exactly(bytes.data() + start, length, ".npy header");
  }
  return parse_npy_header(bytes, in.name(), max_data_bytes);
}

void read_npy_data(ByteStream& in, const NpyHeader& h, const std::function<void(const uint8_t*, size_t)>& take) {
  // 1 MiB pieces: a multiple of every item size NumPy has (up to 16 bytes).
  constexpr uint64_t kPiece = uint64_t{1} << 20;
  std::vector<uint8_t> piece(static_cast<size_t>(std::min(kPiece, std::max<uint64_t>(h.data_bytes(), 1))));
  for (uint64_t done = 0, total = h.data_bytes(); done < total;) {
    const uint64_t n = std::min<uint64_t>(piece.size(), total - done);
    in.read_exactly(piece.data(), n, "array data");
    take(piece.data(), static_cast<size_t>(n));
    done += n;
  }
  in.expect_end("array data the .npy header promises");
}

}  // namespace axon::data
