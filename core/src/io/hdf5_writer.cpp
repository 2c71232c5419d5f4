// HDF5's earliest on-disk format (the HDF5 File Format Specification,
// version 2.0), as h5py writes it with the library's defaults. The file is
// laid out children first: a dataset's raw data, then its object header; a
// group's children, then its local heap of names, its symbol-table nodes,
// its B-tree and its object header; the superblock at byte 0 is filled in
// last, when the root group and the file's end are known.
#include "hdf5_format.hpp"

#include <axon/error.hpp>
#include <axon/io/hdf5_writer.hpp>

#include <cstring>

namespace axon::io {

struct Hdf5Writer::Node {
  std::map<std::string, std::unique_ptr<Node>> children;  // std::string's order is strcmp's, as HDF5 sorts
  bool dataset = false;
  bool is_float = true;  // float32, else int64
  std::vector<int64_t> shape;
  std::string raw;  // little-endian values
};

namespace {

constexpr uint64_t kSuperblockBytes = 96;
constexpr uint64_t kLeafK = 4;  // a symbol-table node holds 2K = 8 entries
// The end of a local heap's free list: HDF5's H5HL_FREE_NULL.
constexpr uint64_t kFreeListEnd = 1;

// `bytes` (at most 8) little-endian bytes of v.
void put(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void pad8(std::string& s) { s.resize((s.size() + 7) / 8 * 8, '\0'); }

struct Message {
  uint16_t type;
  uint8_t flags;
  std::string body;
};

struct GroupPlace {
  uint64_t header, btree, heap;
};

class Encoder {
 public:
  explicit Encoder(uint64_t internal_k) : internal_k_(internal_k) { out_.resize(kSuperblockBytes, '\0'); }

  std::string finish(const Hdf5Writer::Node& root) {
    const GroupPlace r = group(root);
    std::string sb("\x89HDF\r\n\x1a\n", 8);
    // Superblock, free-space, root entry and shared-header versions 0; offsets and lengths of 8 bytes.
    for (int v : {0, 0, 0, 0, 0, 8, 8, 0}) sb.push_back(static_cast<char>(v));
    put(sb, kLeafK, 2);
    put(sb, internal_k_, 2);
    put(sb, 0, 4);  // consistency flags
    put(sb, 0, 8);  // base address
    put(sb, kHdf5UndefinedAddress, 8);  // free-space information
    put(sb, out_.size(), 8);  // end of file
    put(sb, kHdf5UndefinedAddress, 8);  // driver information
    // The root group's symbol-table entry, its B-tree and heap cached (type 1).
    put(sb, 0, 8);
    put(sb, r.header, 8);
    put(sb, 1, 4);
    put(sb, 0, 4);
    put(sb, r.btree, 8);
    put(sb, r.heap, 8);
    std::memcpy(out_.data(), sb.data(), kSuperblockBytes);
    return std::move(out_);
  }

 private:
  uint64_t object(const Hdf5Writer::Node& n) { return n.dataset ? dataset(n) : group(n).header; }

  uint64_t header(const std::vector<Message>& messages) {
    const uint64_t at = out_.size();
    uint64_t size = 0;
    for (const Message& m : messages) size += 8 + m.body.size();
    put(out_, 1, 1);  // version 1
    put(out_, 0, 1);
    put(out_, messages.size(), 2);
    put(out_, 1, 4);  // reference count
    put(out_, size, 4);
    put(out_, 0, 4);  // the messages start 8-byte aligned
    for (const Message& m : messages) {
      put(out_, m.type, 2);
      put(out_, m.body.size(), 2);
      put(out_, m.flags, 1);
      put(out_, 0, 3);
      out_ += m.body;
    }
    return at;
  }

  uint64_t dataset(const Hdf5Writer::Node& n) {
    const uint64_t data = n.raw.empty() ? kHdf5UndefinedAddress : out_.size();
    out_ += n.raw;
    std::string space;  // version 1; the maximum dimensions equal the dimensions
    put(space, 1, 1);
    put(space, n.shape.size(), 1);
    put(space, n.shape.empty() ? 0 : 1, 1);
    put(space, 0, 5);
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t d : n.shape) put(space, static_cast<uint64_t>(d), 8);
    std::string type;
    if (n.is_float) {  // IEEE little-endian float32: sign bit 31, exponent 23+8 biased 127, mantissa 0+23
      type = std::string("\x11\x20\x1f\x00", 4);
      put(type, 4, 4);
      for (auto [v, b] : {std::pair{0, 2}, {32, 2}, {23, 1}, {8, 1}, {0, 1}, {23, 1}, {127, 4}})
        put(type, static_cast<uint64_t>(v), b);
    } else {  // little-endian signed 64-bit integer
      type = std::string("\x10\x08\x00\x00", 4);
      put(type, 8, 4);
      put(type, 0, 2);
      put(type, 64, 2);
    }
    pad8(type);
    // Fill value version 2: allocated late, written if set, default value.
    const std::string fill("\x02\x02\x02\x01\x00\x00\x00\x00", 8);
    std::string layout;  // version 3, contiguous
    put(layout, 3, 1);
    put(layout, 1, 1);
    put(layout, data, 8);
    put(layout, n.raw.size(), 8);
    pad8(layout);
    return header({{0x0001, 0, space}, {0x0003, 1, type}, {0x0005, 1, fill}, {0x0008, 0, layout}});
  }

  GroupPlace group(const Hdf5Writer::Node& g) {
    std::vector<std::pair<uint64_t, uint64_t>> entries;  // (name's heap offset, object header)
    std::string names(8, '\0');                          // offset 0: the empty name B-tree keys start from
    for (const auto& [name, child] : g.children) {
      const uint64_t address = object(*child);
      entries.emplace_back(names.size(), address);
      names += name;
      names.push_back('\0');
      pad8(names);
    }
    const uint64_t free_block = names.size();  // one free block closes the heap, as h5py leaves it
    put(names, kFreeListEnd, 8);
    put(names, 16, 8);

    GroupPlace p{};
    p.heap = out_.size();
    out_ += "HEAP";
    put(out_, 0, 4);  // version 0, reserved
    put(out_, names.size(), 8);
    put(out_, free_block, 8);
    put(out_, p.heap + 32, 8);
    out_ += names;

    const uint64_t per_node = 2 * kLeafK;
    std::vector<uint64_t> nodes;
    for (size_t first = 0; first < entries.size(); first += per_node) {
      nodes.push_back(out_.size());
      const size_t count = std::min<size_t>(per_node, entries.size() - first);
      out_ += "SNOD";
      put(out_, 1, 1);  // version 1
      put(out_, 0, 1);
      put(out_, count, 2);
      for (size_t i = 0; i < per_node; ++i) {
        const size_t e = first + i;
        put(out_, i < count ? entries[e].first : 0, 8);
        put(out_, i < count ? entries[e].second : 0, 8);
        out_.append(24, '\0');  // cache type 0 (nothing cached), reserved, scratch pad
      }
    }

    // A B-tree of one leaf level (K = internal_k_ allows 2K symbol-table
    // nodes): key i+1 is the heap offset of the last name in node i.
    p.btree = out_.size();
    out_ += "TREE";
    put(out_, 0, 1);  // group nodes
    put(out_, 0, 1);  // level 0
    put(out_, nodes.size(), 2);
    put(out_, kHdf5UndefinedAddress, 8);
    put(out_, kHdf5UndefinedAddress, 8);
    put(out_, 0, 8);  // key 0: the empty name
    for (size_t i = 0; i < 2 * internal_k_; ++i) {
      const bool used = i < nodes.size();
      put(out_, used ? nodes[i] : 0, 8);
      put(out_, used ? entries[std::min(entries.size(), (i + 1) * per_node) - 1].first : 0, 8);
    }
    std::string table;
    put(table, p.btree, 8);
    put(table, p.heap, 8);
    p.header = header({{0x0011, 0, table}});
    return p;
  }

  std::string out_;
  uint64_t internal_k_;
};

// The most symbol-table nodes any group needs.
uint64_t most_nodes(const Hdf5Writer::Node& n) {
  uint64_t most = (n.children.size() + 2 * kLeafK - 1) / (2 * kLeafK);
  for (const auto& [name, child] : n.children) most = std::max(most, most_nodes(*child));
  return most;
}

}  // namespace

Hdf5Writer::Hdf5Writer() : root_(std::make_unique<Node>()) {}
Hdf5Writer::~Hdf5Writer() = default;

Hdf5Writer::Node& Hdf5Writer::node_at(const std::string& path, bool dataset) {
  Node* n = root_.get();
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    const std::string name = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (name.empty() || name.find('\0') != std::string::npos)
      throw RuntimeError("HDF5 writer: \"" + path + "\" is not a path of names");
    if (n->dataset) throw RuntimeError("HDF5 writer: a dataset lies on the path " + path);
    const bool last = slash == std::string::npos;
    auto it = n->children.find(name);
    if (it == n->children.end()) {
      it = n->children.emplace(name, std::make_unique<Node>()).first;
      it->second->dataset = last && dataset;
    } else if (last && (dataset || it->second->dataset)) {
      throw RuntimeError("HDF5 writer: " + path + " is written twice");
    }
    n = it->second.get();
    if (last) return *n;
    start = slash + 1;
  }
}

void Hdf5Writer::add_group(const std::string& path) { node_at(path, false); }

void Hdf5Writer::add_floats(const std::string& path, const std::vector<int64_t>& shape, std::span<const float> values) {
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw RuntimeError("HDF5 writer: " + path + " has a negative dimension");
    count *= static_cast<uint64_t>(d);
  }
  if (count != values.size())
    throw RuntimeError("HDF5 writer: " + path + " takes " + std::to_string(count) + " values, given " +
                       std::to_string(values.size()));
  Node& n = node_at(path, true);
  n.shape = shape;
  n.raw.resize(values.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &values[i], 4);
    for (int b = 0; b < 4; ++b) n.raw[4 * i + static_cast<size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xff);
  }
}

void Hdf5Writer::add_int64(const std::string& path, int64_t value) {
  Node& n = node_at(path, true);
  n.is_float = false;
  put(n.raw, static_cast<uint64_t>(value), 8);
}

std::string Hdf5Writer::bytes() const {
  return Encoder(std::max<uint64_t>(16, (most_nodes(*root_) + 1) / 2)).finish(*root_);
}

}  // namespace axon::io
