#include <axon/error.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/parse.hpp>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <set>

namespace axon::io {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

using Json = nlohmann::json;
constexpr const char* kChecksumKey = "axon_crc32";

[[noreturn]] void bad(const std::string& what) { throw UsageError(what); }

uint32_t crc_update(uint32_t crc, std::string_view s) {
  uLong c = crc;
  while (!s.empty()) {
    const auto n = static_cast<uInt>(std::min<size_t>(s.size(), 1u << 30));
    c = crc32(c, reinterpret_cast<const Bytef*>(s.data()), n);
    s.remove_prefix(n);
  }
  return static_cast<uint32_t>(c);
}

// What the checksum covers: every metadata pair but its own, every entry and
// the data, in a fixed spelling that writer and reader share.
uint32_t checksum(const std::map<std::string, std::string>& metadata, const std::vector<SafetensorsEntry>& entries,
                  std::string_view data) {
  std::string canon;
  for (const auto& [k, v] : metadata)
    if (k != kChecksumKey) canon += "m " + std::to_string(k.size()) + ":" + k + std::to_string(v.size()) + ":" + v + "\n";
  for (const SafetensorsEntry& e : entries) {
    canon += "t " + std::to_string(e.name.size()) + ":" + e.name + " " + e.dtype + " [";
    for (int64_t d : e.shape) canon += std::to_string(d) + ",";
    canon += "] " + std::to_string(e.begin) + " " + std::to_string(e.end) + "\n";
  }
  return crc_update(crc_update(static_cast<uint32_t>(crc32(0L, Z_NULL, 0)), canon), data);
}

std::string hex(uint32_t v) {
  char b[9];
  std::snprintf(b, sizeof b, "%08x", v);
  return b;
}

// numel(shape) * size, or 0 with ok = false on overflow.
uint64_t byte_count(const std::vector<int64_t>& shape, size_t size, bool& ok) {
  uint64_t n = size;
  ok = true;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) ok = false;
  return ok ? n : 0;
}

uint64_t unsigned_of(const Json& j, const std::string& what) {
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<int64_t>() >= 0))
    bad(what + " is not a non-negative integer");
  return j.get<uint64_t>();
}

// Rejects duplicate keys in any object of the header (nlohmann would keep
// the last one silently).
Json parse_json(std::string_view text) {
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  Json::parser_callback_t cb = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    else if (event == Json::parse_event_t::object_end) keys.pop_back();
    else if (event == Json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      duplicate = parsed.get<std::string>();
    return true;
  };
  Json j;
  try {
    j = Json::parse(text.begin(), text.end(), cb);
  } catch (const Json::exception& e) {
    bad(std::string("the header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) bad("the header names '" + parse::printable(duplicate) + "' twice");
  return j;
}

}  // namespace

size_t safetensors_dtype_size(std::string_view d) {
  if (d == "BOOL" || d == "U8" || d == "I8" || d == "F8_E5M2" || d == "F8_E4M3") return 1;
  if (d == "I16" || d == "U16" || d == "F16" || d == "BF16") return 2;
  if (d == "I32" || d == "U32" || d == "F32") return 4;
  if (d == "I64" || d == "U64" || d == "F64") return 8;
  return 0;
}

void SafetensorsWriter::add(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
                            std::string_view bytes) {
  if (name.empty() || name == "__metadata__") throw UsageError("safetensors: bad tensor name '" + name + "'");
  for (const SafetensorsEntry& e : entries_)
    if (e.name == name) throw UsageError("safetensors: tensor " + name + " added twice");
  const size_t size = safetensors_dtype_size(dtype);
  bool ok = size > 0;
  const uint64_t n = ok ? byte_count(shape, size, ok) : 0;
  if (!ok || n != bytes.size())
    throw UsageError("safetensors: tensor " + name + " has " + std::to_string(bytes.size()) +
                     " bytes, not what its dtype " + dtype + " and shape make");
  entries_.push_back({name, dtype, shape, data_.size(), data_.size() + bytes.size()});
  data_.append(bytes);
}

void SafetensorsWriter::add_f32(const std::string& name, const std::vector<int64_t>& shape,
                                std::span<const float> values) {
  add(name, "F32", shape, {reinterpret_cast<const char*>(values.data()), values.size_bytes()});
}

void SafetensorsWriter::set_metadata(const std::string& key, const std::string& value) { metadata_[key] = value; }

std::string SafetensorsWriter::bytes(bool with_checksum) const {
  std::map<std::string, std::string> metadata = metadata_;
  if (with_checksum) metadata[kChecksumKey] = hex(checksum(metadata, entries_, data_));
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  for (const SafetensorsEntry& e : entries_)
    header[e.name] = {{"dtype", e.dtype}, {"shape", e.shape}, {"data_offsets", {e.begin, e.end}}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(out.data(), &n, 8);
  out += text;
  out += data_;
  return out;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  for (const SafetensorsEntry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

std::string_view SafetensorsFile::data(const SafetensorsEntry& e) const {
  return std::string_view(bytes_).substr(data_start_ + e.begin, e.end - e.begin);
}

std::vector<float> SafetensorsFile::f32(const std::string& name, const std::vector<int64_t>& shape) const {
  const SafetensorsEntry* e = find(name);
  if (e == nullptr) bad("has no tensor " + name);
  if (e->dtype != "F32") bad("tensor " + name + " is " + e->dtype + ", not F32");
  if (e->shape != shape) {
    auto text = [](const std::vector<int64_t>& dims) {
      std::string t = "[";
      for (size_t i = 0; i < dims.size(); ++i) {
        if (i > 0) t += ',';
        t += std::to_string(dims[i]);
      }
      return t + "]";
    };
    bad("tensor " + name + " has shape " + text(e->shape) + ", expected " + text(shape));
  }
  const std::string_view b = data(*e);
  std::vector<float> v(b.size() / sizeof(float));
  if (!b.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

const std::string& SafetensorsFile::meta(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) bad("has no metadata '" + key + "'");
  return it->second;
}

bool SafetensorsFile::has_checksum() const { return metadata_.count(kChecksumKey) > 0; }

bool SafetensorsFile::checksum_ok() const {
  auto it = metadata_.find(kChecksumKey);
  return it != metadata_.end() &&
         it->second == hex(checksum(metadata_, entries_, std::string_view(bytes_).substr(data_start_)));
}

SafetensorsFile parse_safetensors(std::string bytes, const SafetensorsLimits& limits) {
  if (bytes.size() < 8) bad("is " + std::to_string(bytes.size()) + " bytes, too short for a safetensors file");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  if (n > limits.max_header_bytes)
    bad("claims a header of " + std::to_string(n) + " bytes, more than the limit of " +
        std::to_string(limits.max_header_bytes));
  if (n > bytes.size() - 8)
    bad("claims a header of " + std::to_string(n) + " bytes but holds only " + std::to_string(bytes.size() - 8) +
        " after the length");
  const std::string_view text = std::string_view(bytes).substr(8, n);
  if (text.empty() || text[0] != '{') bad("the header does not start with '{'");
  const Json header = parse_json(text);
  if (!header.is_object()) bad("the header is not a JSON object");

  SafetensorsFile f;
  const uint64_t data_size = bytes.size() - 8 - n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& key = it.key();
    const Json& v = it.value();
    if (key == "__metadata__") {
      if (!v.is_object()) bad("__metadata__ is not an object");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m.value().is_string()) bad("metadata '" + parse::printable(m.key()) + "' is not a string");
        f.metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string what = "tensor '" + parse::printable(key) + "'";
    if (f.entries_.size() >= limits.max_tensors) bad("has more than " + std::to_string(limits.max_tensors) + " tensors");
    if (key.empty()) bad("a tensor has an empty name");
    if (!v.is_object() || v.size() != 3 || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
      bad(what + " is not an object of exactly dtype, shape and data_offsets");
    SafetensorsEntry e;
    e.name = key;
    if (!v["dtype"].is_string()) bad(what + ": dtype is not a string");
    e.dtype = v["dtype"].get<std::string>();
    const size_t size = safetensors_dtype_size(e.dtype);
    if (size == 0) bad(what + ": unknown dtype '" + parse::printable(e.dtype) + "'");
    const Json& shape = v["shape"];
    if (!shape.is_array() || shape.size() > limits.max_rank)
      bad(what + ": shape is not an array of at most " + std::to_string(limits.max_rank) + " dimensions");
    for (const Json& d : shape) {
      const uint64_t dim = unsigned_of(d, what + ": a dimension");
      if (dim > static_cast<uint64_t>(INT64_MAX)) bad(what + ": a dimension is too large");
      e.shape.push_back(static_cast<int64_t>(dim));
    }
    const Json& off = v["data_offsets"];
    if (!off.is_array() || off.size() != 2) bad(what + ": data_offsets is not [begin, end]");
    e.begin = unsigned_of(off[0], what + ": data_offsets");
    e.end = unsigned_of(off[1], what + ": data_offsets");
    if (e.begin > e.end || e.end > data_size)
      bad(what + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
          "] do not fit the data section of " + std::to_string(data_size) + " bytes");
    bool ok = true;
    const uint64_t nbytes = byte_count(e.shape, size, ok);
    if (!ok || nbytes != e.end - e.begin)
      bad(what + ": its dtype and shape make " + (ok ? std::to_string(nbytes) : std::string("too many")) +
          " bytes but data_offsets span " + std::to_string(e.end - e.begin));
    f.entries_.push_back(std::move(e));
  }
  // The tensors must tile the data section: no overlap, no hole, no tail.
  std::sort(f.entries_.begin(), f.entries_.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const SafetensorsEntry& e : f.entries_) {
    if (e.begin != at)
      bad("tensor '" + parse::printable(e.name) + "' starts at byte " + std::to_string(e.begin) + " of the data, " +
          (e.begin < at ? "overlapping the tensor before it" : "leaving a hole after byte " + std::to_string(at)));
    at = e.end;
  }
  if (at != data_size)
    bad("has " + std::to_string(data_size - at) + " bytes after its last tensor");
  f.data_start_ = 8 + static_cast<size_t>(n);
  f.bytes_ = std::move(bytes);
  return f;
}

}  // namespace axon::io
