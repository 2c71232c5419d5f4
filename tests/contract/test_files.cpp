// The file formats docs/training.md describes, read back independently:
//  - the weights file (`--save`): its byte layout, Keras' order and layouts,
//    the CRC-32; and load_weights leaving the model untouched, every weight,
//    after any mismatch;
//  - the data folder: a raw IDX file is preferred to its .gz when both exist.
#include <axon/data/mnist.hpp>
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/model.hpp>
#include <axon/runtime.hpp>
#include <axon/train/weights.hpp>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace axon;
using Catch::Matchers::Contains;

namespace {

Device& cpu() {
  if (!Runtime::initialised()) {
    Config c = Config::from_environment();
    c.visible_devices.reset();
    Runtime::init(c);
  }
  Device* d = Runtime::get().find_device("cpu:0");
  REQUIRE(d != nullptr);
  return *d;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("axon-contract-" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
T at(const std::string& s, size_t& pos) {
  REQUIRE(pos + sizeof(T) <= s.size());
  T v;
  std::memcpy(&v, s.data() + pos, sizeof v);  // the file is little-endian, as this machine
  pos += sizeof v;
  return v;
}

uint32_t crc_of(const std::string& s, size_t n) {
  return static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(n)));
}

// Every weight of the model, in model order.
std::vector<std::vector<float>> weights_of(nn::Sequential& m) {
  std::vector<std::vector<float>> w;
  for (nn::Parameter* p : m.parameters()) w.push_back(p->value.to_vector<float>());
  return w;
}

std::unique_ptr<nn::Sequential> cnn(uint64_t seed, int classes = 10) {
  auto m = nn::make_cnn(classes);
  m->build({28, 28, 1}, cpu(), seed);
  return m;
}

}  // namespace

TEST_CASE("the weights file has the documented layout, Keras' order and a CRC-32", "[files][weights]") {
  TempDir dir;
  DeviceScope scope(cpu());
  auto model = cnn(3);
  const fs::path file = dir.path / "w.axw";
  train::save_weights(*model, file);
  const std::string b = read(file);
  size_t pos = 0;
  CHECK(b.substr(0, 8) == "AXONWTS1");
  pos = 8;
  CHECK(at<uint32_t>(b, pos) == 1);  // format version
  const uint32_t count = at<uint32_t>(b, pos);
  // Keras' model.get_weights(): layer by layer, kernel before bias, HWIO and [in, out].
  const std::vector<std::pair<std::string, std::vector<int64_t>>> keras{
      {"conv2d/kernel", {3, 3, 1, 32}},   {"conv2d/bias", {32}},  {"conv2d_1/kernel", {3, 3, 32, 64}},
      {"conv2d_1/bias", {64}},            {"conv2d_2/kernel", {3, 3, 64, 64}}, {"conv2d_2/bias", {64}},
      {"dense/kernel", {576, 64}},        {"dense/bias", {64}},   {"dense_1/kernel", {64, 10}},
      {"dense_1/bias", {10}}};
  REQUIRE(count == keras.size());
  const auto values = weights_of(*model);
  for (uint32_t t = 0; t < count; ++t) {
    INFO("tensor " << t);
    const uint32_t len = at<uint32_t>(b, pos);
    REQUIRE(pos + len <= b.size());
    CHECK(b.substr(pos, len) == keras[t].first);
    pos += len;
    CHECK(at<uint32_t>(b, pos) == 0);  // float32
    const uint32_t rank = at<uint32_t>(b, pos);
    REQUIRE(rank == keras[t].second.size());
    for (uint32_t r = 0; r < rank; ++r) CHECK(at<int64_t>(b, pos) == keras[t].second[r]);
    std::vector<float> v(values[t].size());
    REQUIRE(pos + 4 * v.size() <= b.size());
    std::memcpy(v.data(), b.data() + pos, 4 * v.size());
    pos += 4 * v.size();
    CHECK(v == values[t]);
  }
  REQUIRE(pos + 4 == b.size());
  CHECK(at<uint32_t>(b, pos) == crc_of(b, b.size() - 4));
}

TEST_CASE("a weights file that does not fit leaves the model untouched", "[files][weights]") {
  TempDir dir;
  DeviceScope scope(cpu());
  auto source = cnn(3);
  const fs::path good = dir.path / "good.axw";
  train::save_weights(*source, good);
  const std::string bytes = read(good);

  struct Bad {
    const char* what;
    std::string file_bytes;
    const char* message;
  };
  std::vector<Bad> bad;
  {  // the last tensor's name changed (same length, checksum recomputed): only the name is wrong
    std::string b = bytes;
    const size_t name_at = b.rfind("dense_1/bias");
    REQUIRE(name_at != std::string::npos);
    b.replace(name_at, 12, "dense_1/BIAS");
    const uint32_t crc = crc_of(b, b.size() - 4);
    std::memcpy(b.data() + b.size() - 4, &crc, 4);
    bad.push_back({"a name", b, "dense_1/BIAS"});
  }
  {  // one byte of the last tensor's values flipped: the checksum fails
    std::string b = bytes;
    b[b.size() - 10] = static_cast<char>(b[b.size() - 10] ^ 0x40);
    bad.push_back({"a value", b, "checksum"});
  }
  {  // a model with 7 classes: every tensor fits but the last two
    auto other = cnn(4, 7);
    const fs::path f = dir.path / "seven.axw";
    train::save_weights(*other, f);
    bad.push_back({"the last layer's shape", read(f), "dense_1/kernel"});
  }
  bad.push_back({"the magic", "AXONWTS2" + bytes.substr(8), "magic"});
  {  // a NaN in the last value, the checksum recomputed: refused naming the tensor
    std::string b = bytes;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(b.data() + b.size() - 8, &nan, 4);
    const uint32_t crc = crc_of(b, b.size() - 4);
    std::memcpy(b.data() + b.size() - 4, &crc, 4);
    bad.push_back({"a NaN", b, "tensor dense_1/bias holds nan at element 9"});
  }

  for (const Bad& c : bad) {
    INFO("wrong: " << c.what);
    auto target = cnn(5);
    const auto before = weights_of(*target);
    const fs::path f = dir.path / "bad.axw";
    write(f, c.file_bytes);
    CHECK_THROWS_AS(train::load_weights(*target, f), UsageError);
    CHECK_THROWS_WITH(train::load_weights(*target, f), Contains(f.string()) && Contains(c.message));
    CHECK(weights_of(*target) == before);
  }
  // And the good file does load.
  auto target = cnn(5);
  train::load_weights(*target, good);
  CHECK(weights_of(*target) == weights_of(*source));
}

TEST_CASE("a raw IDX file is preferred to its .gz when both exist", "[files][data]") {
  TempDir dir;
  // Raw: 3 images whose pixels are all 1; .gz: 5 images of 2s. Labels likewise.
  auto idx = [](uint8_t type_rank, std::vector<uint32_t> dims, uint8_t fill) {
    std::string s{'\0', '\0', '\x08', static_cast<char>(type_rank)};
    size_t n = 1;
    for (uint32_t d : dims) {
      for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>((d >> shift) & 0xff);
      n *= d;
    }
    return s + std::string(n, static_cast<char>(fill));
  };
  auto gz = [](const fs::path& p, const std::string& bytes) {
    gzFile f = gzopen(p.c_str(), "wb");
    REQUIRE(f != nullptr);
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  };
  write(dir.path / "train-images-idx3-ubyte", idx(3, {3, 28, 28}, 1));
  write(dir.path / "train-labels-idx1-ubyte", idx(1, {3}, 1));
  gz(dir.path / "train-images-idx3-ubyte.gz", idx(3, {5, 28, 28}, 2));
  gz(dir.path / "train-labels-idx1-ubyte.gz", idx(1, {5}, 2));
  CHECK(data::find_idx_file(dir.path, "train-images-idx3-ubyte") == dir.path / "train-images-idx3-ubyte");
  const data::ImageSet s = data::load_split(dir.path, "train");
  CHECK(s.count == 3);
  CHECK(s.images.at(0) == 1);
  CHECK(s.labels.at(0) == 1);
  // Without the raw files, the .gz ones are read.
  fs::remove(dir.path / "train-images-idx3-ubyte");
  fs::remove(dir.path / "train-labels-idx1-ubyte");
  const data::ImageSet g = data::load_split(dir.path, "train");
  CHECK(g.count == 5);
  CHECK(g.images.at(0) == 2);
}
