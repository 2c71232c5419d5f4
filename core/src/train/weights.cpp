#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/terminate_on_nan.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/train/weight_tensors.hpp>
#include <axon/train/weights.hpp>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace axon::train {
namespace {

static_assert(std::endian::native == std::endian::little, "the weights format is little-endian");
static_assert(sizeof(float) == 4);

constexpr uint32_t kVersion = 1;
// The safetensors header: the tensors' entries and the metadata, whose model
// JSON is at most limits::kMaxModelJsonBytes.
constexpr uint64_t kMaxSafetensorsWeightsHeader = uint64_t{16} << 20;

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

uint32_t crc_of(const char* p, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {
    const auto chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(p), chunk);
    p += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

// Bounds-checked reading of the file's bytes.
class Reader {
 public:
  Reader(const std::string& bytes, std::filesystem::path file) : b_(bytes), file_(std::move(file)) {}
  template <class T>
  T get(const char* what) {
    T v;
    need(sizeof v, what);
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  const char* take(size_t n, const char* what) {
    need(n, what);
    const char* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t pos() const { return pos_; }
  [[noreturn]] void bad(const std::string& what) const { throw UsageError(file_.string() + ": " + what); }

 private:
  void need(size_t n, const char* what) const {
    if (b_.size() - pos_ < n) bad(std::string("truncated while reading ") + what);
  }
  const std::string& b_;
  std::filesystem::path file_;
  size_t pos_ = 0;
};

}  // namespace

std::string serialize_weights(nn::Model& model) {
  synchronize_replicas(model);  // a failure of queued work, before its results are read
  std::string out(kWeightsMagic, sizeof kWeightsMagic);
  const auto params = model.parameters();
  put<uint32_t>(out, kVersion);
  put<uint32_t>(out, static_cast<uint32_t>(params.size()));
  for (nn::Parameter* p : params) {
    put<uint32_t>(out, static_cast<uint32_t>(p->name.size()));
    out += p->name;
    put<uint32_t>(out, 0);  // float32
    put<uint32_t>(out, static_cast<uint32_t>(p->value.rank()));
    for (int64_t d : p->value.shape()) put<int64_t>(out, d);
    const std::vector<float> v = p->value.to_vector<float>();
    check_finite_for_writing(p->name, v);
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  put<uint32_t>(out, crc_of(out.data(), out.size()));
  return out;
}

bool is_safetensors_file(const std::filesystem::path& file) { return file.extension() == ".safetensors"; }

std::string serialize_safetensors_weights(nn::Model& model, const WeightsMetadata& metadata) {
  synchronize_replicas(model);
  nn::Replica& r0 = model.replica(0);
  io::SafetensorsWriter w;
  add_weight_tensors(w, "", r0.buffers().values(), WeightLayout::of(r0));
  for (const auto& [key, value] : metadata) w.set_metadata(key, value);
  w.set_metadata("format", "axon-weights");
  return w.bytes(true);
}

namespace {

// A .keras file's config.json: the metadata's model JSON (or the model's own)
// with the metadata's compile_config.
std::string keras_file_config(nn::Model& model, const WeightsMetadata& metadata) {
  const auto m = metadata.find("model");
  nlohmann::json config =
      nlohmann::json::parse(m != metadata.end() ? m->second : nn::keras_json(model, model.input_shape()));
  if (const auto c = metadata.find("compile_config"); c != metadata.end())
    config["compile_config"] = nlohmann::json::parse(c->second);
  return config.dump();
}

}  // namespace

void save_weights(nn::Model& model, const std::filesystem::path& file, const WeightsMetadata& metadata) {
  if (is_keras_file(file))
    write_file_atomically(file, serialize_keras_file(model, keras_file_config(model, metadata)));
  else
    write_file_atomically(file, is_safetensors_file(file) ? serialize_safetensors_weights(model, metadata)
                                                          : serialize_weights(model));
}

uint64_t max_weights_file_bytes(const WeightLayout& layout, const std::filesystem::path& file) {
  // Twice this model's file and a MiB: room for a wrong model's file to be
  // read and named as such. A safetensors header may hold the model JSON.
  if (is_safetensors_file(file))
    return 2 * (8 + kMaxSafetensorsWeightsHeader + 4 * static_cast<uint64_t>(layout.floats)) + (1 << 20);
  // A .keras file: float64 weights at most, and an optimizer's slots (Adam:
  // two per weight), HDF5's own structures and config.json besides.
  if (is_keras_file(file)) return 8 * 4 * static_cast<uint64_t>(layout.floats) + (uint64_t{16} << 20);
  uint64_t size = sizeof kWeightsMagic + 4 + 4 + 4;
  for (size_t i = 0; i < layout.names.size(); ++i)
    size += 4 + layout.names[i].size() + 4 + 4 + 8 * static_cast<uint64_t>(layout.shapes[i].size()) +
            4 * static_cast<uint64_t>(numel(layout.shapes[i]));
  return 2 * size + (1 << 20);
}

namespace {

// The flat values buffer from an axon weights file.
std::vector<float> flat_from_axw(const WeightLayout& layout, const std::string& bytes, const std::filesystem::path& file) {
  Reader r(bytes, file);
  if (bytes.size() < sizeof kWeightsMagic + 12 || std::memcmp(bytes.data(), kWeightsMagic, sizeof kWeightsMagic) != 0)
    r.bad("not an axon weights file (bad magic)");
  uint32_t stored_crc;
  std::memcpy(&stored_crc, bytes.data() + bytes.size() - 4, 4);
  if (crc_of(bytes.data(), bytes.size() - 4) != stored_crc) r.bad("checksum mismatch: the file is corrupt or truncated");
  r.take(sizeof kWeightsMagic, "magic");
  if (uint32_t version = r.get<uint32_t>("version"); version != kVersion)
    r.bad("format version " + std::to_string(version) + ", this build reads version " + std::to_string(kVersion));
  const auto count = r.get<uint32_t>("tensor count");
  if (count != layout.names.size())
    r.bad("holds " + std::to_string(count) + " tensors, the model has " + std::to_string(layout.names.size()));
  std::vector<float> flat(static_cast<size_t>(layout.floats), 0.0f);
  for (size_t i = 0; i < layout.names.size(); ++i) {
    const auto len = r.get<uint32_t>("name length");
    const std::string name(r.take(len, "name"), len);
    if (name != layout.names[i]) r.bad("tensor '" + name + "' where the model has '" + layout.names[i] + "'");
    if (r.get<uint32_t>("dtype") != 0) r.bad("tensor " + name + " is not float32");
    const auto rank = r.get<uint32_t>("rank");
    if (rank > AXON_MAX_RANK) r.bad("tensor " + name + " has rank " + std::to_string(rank));
    Shape shape;
    for (uint32_t d = 0; d < rank; ++d) shape.push_back(r.get<int64_t>("dims"));
    if (shape != layout.shapes[i])
      r.bad("tensor " + name + " has shape " + shape_string(shape) + ", the model needs " + shape_string(layout.shapes[i]));
    const size_t n = static_cast<size_t>(numel(shape));
    float* dst = flat.data() + layout.offsets[i];
    std::memcpy(dst, r.take(n * sizeof(float), "values"), n * sizeof(float));
    for (size_t k = 0; k < n; ++k)
      if (!std::isfinite(dst[k]))
        r.bad("tensor " + name + " holds " + (std::isnan(dst[k]) ? "nan" : dst[k] < 0 ? "-inf" : "inf") +
              " at element " + std::to_string(k) + "; weights must be finite");
  }
  if (r.pos() + 4 != bytes.size()) r.bad("has " + std::to_string(bytes.size() - r.pos() - 4) + " unexpected bytes");
  return flat;
}

// The flat values buffer from a safetensors weights file (axon's, or one a
// user wrote from Keras or NumPy: the checksum is checked when there is one).
std::vector<float> flat_from_safetensors(const WeightLayout& layout, std::string bytes,
                                         const std::filesystem::path& file) {
  try {
    io::SafetensorsLimits limits;
    limits.max_header_bytes = kMaxSafetensorsWeightsHeader;
    const io::SafetensorsFile f = io::parse_safetensors(std::move(bytes), limits);
    if (f.has_checksum() && !f.checksum_ok()) throw UsageError("fails its checksum (axon_crc32): the file is damaged");
    std::vector<float> flat = weight_tensors_from(f, "", layout);
    for (const io::SafetensorsEntry& e : f.tensors())
      if (std::find(layout.names.begin(), layout.names.end(), e.name) == layout.names.end())
        throw UsageError("has tensor " + e.name + ", which the model does not have");
    return flat;
  } catch (const UsageError& e) {
    throw UsageError(file.string() + ": " + e.what());
  }
}

// The flat values buffer from a Keras .keras file (its model.weights.h5).
std::vector<float> flat_from_keras(const WeightLayout& layout, const std::string& bytes,
                                   const std::filesystem::path& file) {
  const KerasArchive a = read_keras_archive(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), file.string(),
      max_weights_file_bytes(layout, file));
  return keras_archive_weights(a, layout, file.string());
}

std::vector<float> flat_from(const WeightLayout& layout, const std::string& bytes, const std::filesystem::path& file) {
  if (is_keras_file(file)) return flat_from_keras(layout, bytes, file);
  return is_safetensors_file(file) ? flat_from_safetensors(layout, bytes, file) : flat_from_axw(layout, bytes, file);
}

}  // namespace

void check_weights(const WeightLayout& layout, const std::string& bytes, const std::filesystem::path& file) {
  flat_from(layout, bytes, file);
}

void set_weights(nn::Model& model, const std::string& bytes, const std::filesystem::path& file) {
  // Everything is read and checked before any replica changes.
  const std::vector<float> flat = flat_from(WeightLayout::of(model.replica(0)), bytes, file);
  for (int i = 0; i < model.num_replicas(); ++i)
    model.replica(i).buffers().values().copy_from_host(flat.data(), flat.size() * sizeof(float));
}

void load_weights(nn::Model& model, const std::filesystem::path& file) {
  // A folder, a device or a FIFO is never read, nor a file far larger than this model's.
  const uint64_t cap = max_weights_file_bytes(WeightLayout::of(model.replica(0)), file);
  set_weights(model, io::read_regular_file(file, cap, "weights file"), file);
}

}  // namespace axon::train
