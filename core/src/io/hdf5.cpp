// HDF5's on-disk format, the parts h5py writes by default (the HDF5 File
// Format Specification, version 2.0: superblock 0/1, object header 1,
// symbol tables, local heaps, version-1 B-trees of type 0, and the
// dataspace, datatype, layout and link messages). Every read goes through
// Cursor, which checks it against the file's bytes.
#include "hdf5_format.hpp"

#include <axon/error.hpp>
#include <axon/io/hdf5.hpp>

#include <algorithm>
#include <cstring>
#include <set>

namespace axon::io {
namespace {

// Message types (HDF5 spec IV.A.2).
constexpr uint16_t kNil = 0x0000, kDataspace = 0x0001, kLinkInfo = 0x0002, kDatatype = 0x0003, kLink = 0x0006,
                   kExternalFiles = 0x0007, kLayout = 0x0008, kFilters = 0x000B, kContinuation = 0x0010,
                   kSymbolTable = 0x0011;
// Messages a reader must understand to read the object: flag bit 3 of a
// message says the file cannot be read without it.
constexpr uint8_t kMustUnderstand = 0x08;

class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, const std::string& name, const Hdf5Limits& limits)
      : bytes_(bytes), name_(name), limits_(limits) {}

  [[noreturn]] void fail(const std::string& why, uint64_t at) const {
    throw UsageError(name_ + ": malformed HDF5: " + why + " at byte " + std::to_string(at));
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw UsageError(name_ + ": " + what + " (axon reads the HDF5 that Keras writes through h5py's defaults)");
  }

  // A bounds-checked view from `at`, `n` bytes long.
  struct Cursor {
    const Reader* r;
    uint64_t at, end;
    void need(uint64_t n, const char* what) const {
      if (n > end - at) r->fail(std::string(what) + " runs past its end", at);
    }
    uint64_t uint(int n, const char* what) {
      need(static_cast<uint64_t>(n), what);
      uint64_t v = 0;
      for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(r->bytes_[at + static_cast<uint64_t>(i)]) << (8 * i);
      at += static_cast<uint64_t>(n);
      return v;
    }
    uint8_t u8(const char* what) { return static_cast<uint8_t>(uint(1, what)); }
    uint16_t u16(const char* what) { return static_cast<uint16_t>(uint(2, what)); }
    uint32_t u32(const char* what) { return static_cast<uint32_t>(uint(4, what)); }
    uint64_t u64(const char* what) { return uint(8, what); }
    void skip(uint64_t n, const char* what) {
      need(n, what);
      at += n;
    }
    bool signature(const char* sig) {
      need(4, sig);
      const bool ok = std::memcmp(r->bytes_.data() + at, sig, 4) == 0;
      at += 4;
      return ok;
    }
  };

  // n bytes from `at` (an address relative to the base), checked.
  Cursor at(uint64_t address, uint64_t n, const char* what) const {
    if (address == kHdf5UndefinedAddress || address > bytes_.size() - base_)
      fail(std::string(what) + " has an address outside the file", address);
    const uint64_t begin = base_ + address;
    if (n > bytes_.size() - begin) fail(std::string(what) + " runs past the end of the file", begin);
    return Cursor{this, begin, begin + n};
  }
  // From `address` to the end of the file.
  Cursor from(uint64_t address, const char* what) const {
    if (address == kHdf5UndefinedAddress || address > bytes_.size() - base_)
      fail(std::string(what) + " has an address outside the file", address);
    return Cursor{this, base_ + address, bytes_.size()};
  }

  uint64_t root() {
    // The superblock may follow a user block of 512, 1024, 2048, ... bytes.
    static const uint8_t kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    uint64_t sb = 0;
    for (;;) {
      if (sb + 8 > bytes_.size()) throw UsageError(name_ + ": not an HDF5 file (no HDF5 signature)");
      if (std::memcmp(bytes_.data() + sb, kSignature, 8) == 0) break;
      sb = sb == 0 ? 512 : sb * 2;
    }
    Cursor c{this, sb + 8, bytes_.size()};
    const uint8_t version = c.u8("the superblock");
    if (version > 1)
      unsupported("HDF5 superblock version " + std::to_string(version) + " (h5py's libver='latest') is not supported");
    c.skip(3, "the superblock");  // free-space, root entry versions, reserved
    if (c.u8("the superblock") != 0) fail("unknown shared header message format", c.at - 1);
    const uint8_t offsets = c.u8("the superblock"), lengths = c.u8("the superblock");
    if (offsets != 8 || lengths != 8)
      unsupported("HDF5 with " + std::to_string(offsets) + "-byte addresses and " + std::to_string(lengths) +
                  "-byte lengths is not supported");
    c.skip(1, "the superblock");
    leaf_k_ = c.u16("the superblock");
    internal_k_ = c.u16("the superblock");
    if (leaf_k_ == 0 || internal_k_ == 0) fail("a B-tree K of 0", c.at - 4);
    c.skip(4, "the superblock");  // consistency flags
    if (version == 1) c.skip(4, "the superblock");
    base_ = c.u64("the superblock");
    if (base_ > bytes_.size()) fail("a base address past the end", c.at - 8);
    c.skip(24, "the superblock");  // free space, end of file, driver information
    return symbol_entry(c, nullptr);
  }

  // A symbol table entry: its object header's address (and its name's heap offset).
  uint64_t symbol_entry(Cursor& c, uint64_t* name_offset) {
    const uint64_t name = c.u64("a symbol table entry");
    if (name_offset != nullptr) *name_offset = name;
    const uint64_t header = c.u64("a symbol table entry");
    c.skip(24, "a symbol table entry");  // cache type, reserved, scratch pad
    return header;
  }

  struct Message {
    uint16_t type;
    uint8_t flags;
    uint64_t at, size;
  };

  // The messages of a version-1 object header, continuations included.
  std::vector<Message> messages(uint64_t address) {
    Cursor c = from(address, "an object header");
    const uint64_t start = c.at;
    const uint8_t version = c.u8("an object header");
    if (version == 'O')
      unsupported("version-2 object headers (h5py's libver='latest') are not supported");
    if (version != 1) fail("an object header of version " + std::to_string(version), start);
    c.skip(1, "an object header");
    const uint16_t count = c.u16("an object header");
    c.skip(4, "an object header");  // reference count
    const uint32_t size = c.u32("an object header");
    c.skip(4, "an object header");  // padding to 8 bytes
    std::vector<std::pair<uint64_t, uint64_t>> blocks{{c.at - base_, size}};
    std::vector<Message> out;
    for (size_t b = 0; b < blocks.size() && out.size() < count; ++b) {
      if (b >= 64) fail("more than 64 continuation blocks", start);
      Cursor m = at(blocks[b].first, blocks[b].second, "an object header's messages");
      while (m.end - m.at >= 8 && out.size() < count) {
        Message msg{};
        msg.type = m.u16("a message");
        const uint16_t msize = m.u16("a message");
        msg.flags = m.u8("a message");
        m.skip(3, "a message");
        msg.at = m.at;
        msg.size = msize;
        m.skip(msize, "a message's data");
        if (msg.type == kContinuation) {
          Cursor k{this, msg.at, msg.at + msg.size};
          const uint64_t where = k.u64("a continuation"), length = k.u64("a continuation");
          blocks.emplace_back(where, length);
        }
        out.push_back(msg);
      }
    }
    return out;
  }

  Cursor data(const Message& m) const { return Cursor{this, m.at, m.at + m.size}; }

  // A null-terminated name at `offset` in a local heap's data segment.
  std::string heap_name(uint64_t heap, uint64_t offset) {
    Cursor h = at(heap, 32, "a local heap");
    if (!h.signature("HEAP")) fail("a local heap without its signature", h.at - 4);
    if (h.u8("a local heap") != 0) fail("a local heap of another version", h.at - 1);
    h.skip(3, "a local heap");
    const uint64_t size = h.u64("a local heap");
    h.skip(8, "a local heap");  // free list
    const uint64_t segment = h.u64("a local heap");
    if (offset >= size) fail("a name outside its local heap", h.at);
    Cursor s = at(segment, size, "a local heap's data");
    s.skip(offset, "a local heap's data");
    std::string name;
    for (;;) {
      const char ch = static_cast<char>(s.u8("a name in a local heap"));
      if (ch == '\0') break;
      if (name.size() >= 1024) fail("a name of more than 1024 bytes", s.at);
      name += ch;
    }
    check_name(name, s.at);
    return name;
  }

  // Names end up in paths and messages: no '/', no control characters.
  void check_name(const std::string& name, uint64_t at) const {
    if (name.empty()) fail("an empty link name", at);
    for (const char ch : name)
      if (ch == '/' || static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
        fail("a link name holding '/' or a control character", at);
  }

  // The (name, object header) pairs of a symbol-table group's B-tree.
  void btree(uint64_t node, uint64_t heap, std::vector<std::pair<std::string, uint64_t>>& out, int depth) {
    if (depth > 64) fail("a B-tree deeper than 64 levels", node);
    Cursor c = from(node, "a B-tree node");
    if (!c.signature("TREE")) fail("a B-tree node without its signature", c.at - 4);
    if (c.u8("a B-tree node") != 0) fail("a B-tree node that is not a group's", c.at - 1);
    const uint8_t level = c.u8("a B-tree node");
    const uint16_t entries = c.u16("a B-tree node");
    if (entries > 2 * internal_k_) fail("a B-tree node over-full", c.at - 2);
    c.skip(16, "a B-tree node");  // siblings
    for (uint16_t i = 0; i < entries; ++i) {
      c.skip(8, "a B-tree key");
      const uint64_t child = c.u64("a B-tree child");
      if (++nodes_ > limits_.max_objects) fail("more than " + std::to_string(limits_.max_objects) + " nodes", c.at);
      if (level > 0) {
        btree(child, heap, out, depth + 1);
        continue;
      }
      Cursor s = from(child, "a symbol table node");
      if (!s.signature("SNOD")) fail("a symbol table node without its signature", s.at - 4);
      if (s.u8("a symbol table node") != 1) fail("a symbol table node of another version", s.at - 1);
      s.skip(1, "a symbol table node");
      const uint16_t symbols = s.u16("a symbol table node");
      if (symbols > 2 * leaf_k_) fail("a symbol table node over-full", s.at - 2);
      for (uint16_t k = 0; k < symbols; ++k) {
        uint64_t name_offset = 0;
        const uint64_t header = symbol_entry(s, &name_offset);
        out.emplace_back(heap_name(heap, name_offset), header);
      }
    }
  }

  // A link message's name and hard link target (HDF5 spec IV.A.2.g).
  std::pair<std::string, uint64_t> link(const Message& m) {
    Cursor c = data(m);
    if (c.u8("a link message") != 1) fail("a link message of another version", c.at - 1);
    const uint8_t flags = c.u8("a link message");
    uint8_t type = 0;
    if (flags & 0x08) type = c.u8("a link message");
    if (flags & 0x04) c.skip(8, "a link message");  // creation order
    if (flags & 0x10) c.skip(1, "a link message");  // name encoding
    const uint64_t length = c.uint(1 << (flags & 3), "a link message");
    if (length == 0 || length > 1024) fail("a link name of " + std::to_string(length) + " bytes", c.at);
    c.need(length, "a link name");
    std::string name(reinterpret_cast<const char*>(bytes_.data() + c.at), length);
    c.skip(length, "a link name");
    check_name(name, c.at);
    if (type != 0) unsupported("soft and external links are not supported (" + name + ")");
    return {name, c.u64("a link message")};
  }

  void dataset(const std::string& path, uint64_t header, const std::vector<Message>& ms, std::vector<Hdf5Dataset>& out) {
    Hdf5Dataset d;
    d.path = path;
    bool space = false, type = false, layout = false;
    uint64_t stored_at = kHdf5UndefinedAddress, stored_bytes = 0;
    for (const Message& m : ms) {
      Cursor c = data(m);
      if (m.type == kDataspace) {
        const uint8_t version = c.u8("a dataspace");
        const uint8_t rank = c.u8("a dataspace");
        const uint8_t flags = c.u8("a dataspace");
        if (version == 1) {
          c.skip(5, "a dataspace");
        } else if (version == 2) {
          if (c.u8("a dataspace") == 2) unsupported(path + " has a null dataspace");
        } else {
          fail("a dataspace of version " + std::to_string(version), m.at);
        }
        if (rank > limits_.max_rank) fail(path + " has rank " + std::to_string(rank), m.at);
        for (uint8_t i = 0; i < rank; ++i) {
          const uint64_t n = c.u64("a dataspace");
          if (n > (uint64_t{1} << 40)) fail(path + " has a dimension of " + std::to_string(n), m.at);
          d.shape.push_back(static_cast<int64_t>(n));
        }
        (void)flags;  // maximum sizes, if any, follow and do not matter here
        space = true;
      } else if (m.type == kDatatype) {
        const uint8_t class_version = c.u8("a datatype");
        const uint8_t bits = c.u8("a datatype");
        c.skip(2, "a datatype");
        const uint32_t size = c.u32("a datatype");
        const int cls = class_version & 0x0f;
        if (bits & 0x01) unsupported(path + " is big-endian");
        if (cls == 1 && (size == 4 || size == 8)) {
          d.kind = 'f';
        } else if (cls == 0 && (size == 1 || size == 2 || size == 4 || size == 8)) {
          d.kind = (bits & 0x08) ? 'i' : 'u';
        } else {
          unsupported(path + " is of HDF5 datatype class " + std::to_string(cls) + " and size " + std::to_string(size) +
                      "; axon reads little-endian floats and integers");
        }
        d.element_bytes = static_cast<int>(size);
        type = true;
      } else if (m.type == kLayout) {
        const uint8_t version = c.u8("a layout");
        if (version != 3) unsupported(path + " has a data layout message of version " + std::to_string(version));
        const uint8_t cls = c.u8("a layout");
        if (cls == 0) {
          stored_bytes = c.u16("a layout");
          c.need(stored_bytes, "compact data");
          stored_at = c.at;
        } else if (cls == 1) {
          const uint64_t address = c.u64("a layout");
          stored_bytes = c.u64("a layout");
          if (address == kHdf5UndefinedAddress && stored_bytes == 0) {
            stored_at = 0;  // never written: no data, no bytes to read
          } else {
            stored_at = at(address, stored_bytes, path.c_str()).at;
          }
        } else {
          unsupported(path + " is stored in chunks");
        }
        layout = true;
      } else if (m.type == kFilters) {
        unsupported(path + " is compressed or filtered");
      } else if (m.type == kExternalFiles) {
        unsupported(path + " keeps its data in external files");
      }
    }
    if (!space || !type || !layout) fail(path + " is neither a group nor a dataset", header);
    uint64_t n = 1;
    for (int64_t s : d.shape) {
      n *= static_cast<uint64_t>(s);
      if (n > (uint64_t{1} << 40)) fail(path + " is too large", header);
    }
    if (n * static_cast<uint64_t>(d.element_bytes) != stored_bytes)
      fail(path + " stores " + std::to_string(stored_bytes) + " bytes for " + std::to_string(n) + " elements of " +
               std::to_string(d.element_bytes) + " bytes",
           header);
    d.offset = stored_at;
    out.push_back(std::move(d));
  }

  void visit(uint64_t header, const std::string& path, size_t depth, std::vector<Hdf5Dataset>& out) {
    if (depth > limits_.max_depth) fail("groups nested more than " + std::to_string(limits_.max_depth) + " deep", header);
    if (!visited_.insert(header).second) fail("an object reached twice (" + path + ")", header);
    if (visited_.size() > limits_.max_objects)
      fail("more than " + std::to_string(limits_.max_objects) + " objects", header);
    const std::vector<Message> ms = messages(header);
    std::vector<std::pair<std::string, uint64_t>> children;
    bool group = false;
    for (const Message& m : ms) {
      if (m.type == kSymbolTable) {
        Cursor c = data(m);
        const uint64_t tree = c.u64("a symbol table message"), heap = c.u64("a symbol table message");
        btree(tree, heap, children, 0);
        group = true;
      } else if (m.type == kLink) {
        children.push_back(link(m));
        group = true;
      } else if (m.type == kLinkInfo) {
        Cursor c = data(m);
        c.skip(1, "a link info message");
        const uint8_t flags = c.u8("a link info message");
        if (flags & 1) c.skip(8, "a link info message");
        if (c.u64("a link info message") != kHdf5UndefinedAddress)
          unsupported(path + " keeps its links in a fractal heap");
        group = true;
      } else if (m.type != kNil && m.type != kDataspace && m.type != kDatatype && m.type != kLayout &&
                 (m.flags & kMustUnderstand) && m.type > 0x17) {
        unsupported("an object header message of type " + std::to_string(m.type) + " that must be understood");
      }
    }
    if (!group) {
      dataset(path, header, ms, out);
      return;
    }
    std::sort(children.begin(), children.end());
    for (size_t i = 1; i < children.size(); ++i)
      if (children[i].first == children[i - 1].first) fail("two links named " + children[i].first, header);
    for (const auto& [name, child] : children) visit(child, path.empty() ? name : path + "/" + name, depth + 1, out);
  }

 private:
  std::span<const uint8_t> bytes_;
  const std::string& name_;
  Hdf5Limits limits_;
  uint64_t base_ = 0;
  uint16_t leaf_k_ = 4, internal_k_ = 16;
  size_t nodes_ = 0;
  std::set<uint64_t> visited_;
};

}  // namespace

uint64_t Hdf5Dataset::elements() const {
  uint64_t n = 1;
  for (int64_t s : shape) n *= static_cast<uint64_t>(s);
  return n;
}

Hdf5File::Hdf5File(std::span<const uint8_t> bytes, std::string name, Hdf5Limits limits)
    : bytes_(bytes), name_(std::move(name)) {
  Reader r(bytes_, name_, limits);
  r.visit(r.root(), "", 0, datasets_);
}

const Hdf5Dataset* Hdf5File::find(const std::string& path) const {
  for (const Hdf5Dataset& d : datasets_)
    if (d.path == path) return &d;
  return nullptr;
}

std::vector<float> Hdf5File::floats(const Hdf5Dataset& d) const {
  const uint64_t n = d.elements();
  std::vector<float> out(static_cast<size_t>(n));
  const uint8_t* p = bytes_.data() + d.offset;
  for (uint64_t i = 0; i < n; ++i, p += d.element_bytes) {
    uint64_t raw = 0;
    std::memcpy(&raw, p, static_cast<size_t>(d.element_bytes));  // little-endian host
    if (d.kind == 'f' && d.element_bytes == 4) {
      std::memcpy(&out[i], p, 4);
    } else if (d.kind == 'f') {
      double v = 0;
      std::memcpy(&v, p, 8);
      out[i] = static_cast<float>(v);
    } else if (d.kind == 'i') {
      const int shift = 64 - 8 * d.element_bytes;
      out[i] = static_cast<float>(static_cast<int64_t>(raw << shift) >> shift);
    } else {
      out[i] = static_cast<float>(raw);
    }
  }
  return out;
}

int64_t Hdf5File::integer(const Hdf5Dataset& d) const {
  if (d.kind == 'f' || d.elements() != 1) throw UsageError(name_ + ": " + d.path + " is not one integer");
  uint64_t raw = 0;
  std::memcpy(&raw, bytes_.data() + d.offset, static_cast<size_t>(d.element_bytes));
  if (d.kind == 'u') return static_cast<int64_t>(raw);
  const int shift = 64 - 8 * d.element_bytes;
  return static_cast<int64_t>(raw << shift) >> shift;
}

}  // namespace axon::io
