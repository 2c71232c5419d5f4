// Reader for the golden files of tests/goldens/tf (format in its README.md):
// cases of named tensors written by tools/tf-goldens/generate.py from
// TensorFlow's outputs. Plain C++ (no Catch2), for the GPU machine too.
#pragma once

#include <axon/plugin_abi.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace axon::golden {

struct Tensor {
  std::string name;  // "in", "out", "bound", or "in:<label>", "out:<label>"
  axon_dtype dtype = AXON_FLOAT32;
  std::vector<int64_t> dims;
  std::vector<unsigned char> bytes;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  std::string role() const { return name.substr(0, name.find(':')); }
  std::string label() const { return name.find(':') == std::string::npos ? "" : name.substr(name.find(':') + 1); }
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

struct Case {
  std::string name, op;
  std::map<std::string, std::string> attrs;
  std::vector<Tensor> tensors;

  std::vector<const Tensor*> with_role(const std::string& role) const {
    std::vector<const Tensor*> out;
    for (const Tensor& t : tensors)
      if (t.role() == role) out.push_back(&t);
    return out;
  }
  const Tensor& named(const std::string& name) const {
    for (const Tensor& t : tensors)
      if (t.name == name) return t;
    throw std::runtime_error("golden case " + this->name + " has no tensor " + name);
  }
  const std::string& attr(const std::string& key) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) throw std::runtime_error("golden case " + name + " has no attribute " + key);
    return it->second;
  }
};

inline size_t dtype_bytes(axon_dtype t) { return t == AXON_UINT8 ? 1 : t == AXON_INT64 ? 8 : 4; }

// Reads a whole file; throws std::runtime_error naming the file and what is wrong.
inline std::vector<Case> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open golden file " + path);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t at = 0;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error("golden file " + path + ": " + what + " at byte " + std::to_string(at));
  };
  auto take = [&](size_t n) {
    if (data.size() - at < n) fail("truncated");
    const char* p = data.data() + at;
    at += n;
    return p;
  };
  auto u32 = [&] {
    uint32_t v;
    std::memcpy(&v, take(4), 4);
    return v;
  };
  auto str = [&] {
    const uint32_t n = u32();
    return std::string(take(n), n);
  };
  if (std::string(take(8), 8) != "AXONGLD1") fail("not a golden file (magic)");
  std::vector<Case> cases(u32());
  for (Case& c : cases) {
    c.name = str();
    c.op = str();
    const std::string attrs = str();
    for (size_t i = 0; i < attrs.size();) {
      size_t end = attrs.find(' ', i);
      if (end == std::string::npos) end = attrs.size();
      const std::string kv = attrs.substr(i, end - i);
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) fail("attribute '" + kv + "' of " + c.name + " has no '='");
      c.attrs[kv.substr(0, eq)] = kv.substr(eq + 1);
      i = end + 1;
    }
    c.tensors.resize(u32());
    for (Tensor& t : c.tensors) {
      t.name = str();
      const uint32_t dtype = u32(), rank = u32();
      if (dtype > AXON_INT64) fail("unknown dtype " + std::to_string(dtype));
      if (rank > AXON_MAX_RANK) fail("rank " + std::to_string(rank));
      t.dtype = static_cast<axon_dtype>(dtype);
      for (uint32_t i = 0; i < rank; ++i) {
        int64_t d;
        std::memcpy(&d, take(8), 8);
        if (d < 0) fail("negative dimension");
        t.dims.push_back(d);
      }
      const size_t n = static_cast<size_t>(t.numel()) * dtype_bytes(t.dtype);
      const char* p = take(n);
      t.bytes.assign(p, p + n);
    }
  }
  if (at != data.size()) fail("extra data");
  return cases;
}

}  // namespace axon::golden
