// The HDF5 reader (axon/io/hdf5.hpp) on files h5py and Keras wrote
// (tests/reliability/hdf5, from tools/tf-goldens/hdf5_files.py): a .keras
// file's weights, a group of 300 datasets (a two-level B-tree), nested
// groups, every element type Keras may write, compact layout, an empty
// dataset; the formats it refuses, by name; and hostile bytes: every
// truncation and thousands of seeded corruptions of both files end in a
// UsageError or a clean parse, never a crash, a hang or a read out of
// bounds (the sanitizer stage runs this too).
#include "train_test_util.hpp"

#include <axon/data/zip_archive.hpp>
#include <axon/io/hdf5.hpp>
#include <axon/io/hdf5_writer.hpp>
#include <axon/nn/random.hpp>
#include <axon/train/keras_file.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace axon;
using Catch::Matchers::Contains;

namespace {

const std::string kDir = std::string(AXON_RELIABILITY_DIR) + "/hdf5/";

std::vector<uint8_t> file_bytes(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  REQUIRE(in);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> keras_weights() {
  data::ZipArchive zip(kDir + "keras.keras");
  const data::ZipArchive::Member* m = zip.find("model.weights.h5");
  REQUIRE(m != nullptr);
  std::vector<uint8_t> bytes(static_cast<size_t>(m->size));
  zip.open(*m)->read_exactly(bytes.data(), bytes.size(), "model.weights.h5");
  return bytes;
}

}  // namespace

TEST_CASE("HDF5: a .keras file's weights as Keras saved them", "[hdf5]") {
  const std::vector<uint8_t> bytes = keras_weights();
  io::Hdf5File f(bytes, "keras.keras: model.weights.h5");
  const std::vector<std::pair<std::string, std::vector<int64_t>>> want = {
      {"layers/conv2d/vars/0", {3, 3, 1, 2}},
      {"layers/conv2d/vars/1", {2}},
      {"layers/dense/vars/0", {18, 3}},
      {"layers/dense/vars/1", {3}},
  };
  for (size_t w = 0; w < want.size(); ++w) {
    INFO(want[w].first);
    const io::Hdf5Dataset* d = f.find(want[w].first);
    REQUIRE(d != nullptr);
    CHECK(d->shape == want[w].second);
    const std::vector<float> v = f.floats(*d);
    REQUIRE(v.size() == d->elements());
    for (size_t k = 0; k < v.size(); ++k) CHECK(v[k] == static_cast<float>(static_cast<double>(k) * 0.001 + static_cast<double>(w)));
  }
  const io::Hdf5Dataset* iterations = f.find("optimizer/vars/0");
  REQUIRE(iterations != nullptr);
  CHECK(iterations->shape.empty());
  CHECK(f.integer(*iterations) == 0);
}

TEST_CASE("a .keras file's weight paths: Keras' snake_case of each class, numbered from the second", "[hdf5]") {
  std::string layers;
  for (const char* cls : {"InputLayer", "Conv2D", "BatchNormalization", "ReLU", "LeakyReLU", "PReLU", "Conv2D",
                          "GlobalAveragePooling2D", "DepthwiseConv2D", "Conv2D", "AbcDefGhi"})
    layers += std::string(layers.empty() ? "" : ", ") + R"({"class_name": ")" + cls + R"(", "config": {"name": "l)" +
              std::to_string(layers.size()) + R"("}})";
  const auto paths = train::keras_weight_paths(R"({"config": {"layers": [)" + layers + "]}}", "m.keras");
  std::vector<std::string> got;
  for (const auto& p : paths) got.push_back(p.second);
  // What keras.src.utils.naming.to_snake_case and saving_lib's numbering give.
  CHECK(got == std::vector<std::string>{"layers/conv2d", "layers/batch_normalization", "layers/re_lu",
                                        "layers/leaky_re_lu", "layers/p_re_lu", "layers/conv2d_1",
                                        "layers/global_average_pooling2d", "layers/depthwise_conv2d", "layers/conv2d_2",
                                        "layers/abc_def_ghi"});
}

TEST_CASE("HDF5: large groups, nesting, every element type, compact and empty datasets", "[hdf5]") {
  const std::vector<uint8_t> bytes = file_bytes("many.h5");
  io::Hdf5File f(bytes, "many.h5");
  int in_g = 0;
  for (const io::Hdf5Dataset& d : f.datasets())
    if (d.path.starts_with("g/")) {
      const int i = std::stoi(d.path.substr(3));
      CHECK(f.floats(d) == std::vector<float>{static_cast<float>(i), static_cast<float>(-i)});
      ++in_g;
    }
  CHECK(in_g == 300);
  CHECK(f.integer(*f.find("a/b/c/deep")) == 123456789012);
  CHECK(f.floats(*f.find("f64")) == std::vector<float>{0.5f, 1.25f, -2.0f});
  CHECK(f.floats(*f.find("i32")) == std::vector<float>{-1, 2, 3});
  CHECK(f.floats(*f.find("u8")) == std::vector<float>{7, 255});
  CHECK(f.floats(*f.find("compact")) == std::vector<float>{1, 2, 3, 4});
  CHECK(f.find("empty")->shape == std::vector<int64_t>{0, 3});
  CHECK(f.floats(*f.find("empty")).empty());
  // Each group's entries come sorted by name, as HDF5 keeps them.
  CHECK(f.datasets().front().path == "a/b/c/deep");
}

TEST_CASE("HDF5: the formats axon does not read are refused by name", "[hdf5]") {
  auto refused = [](const std::string& name) {
    const std::vector<uint8_t> bytes = file_bytes(name);
    return test::usage_error([&] { io::Hdf5File f(bytes, name); });
  };
  CHECK_THAT(refused("latest.h5"), Contains("latest.h5: HDF5 superblock version 3 (h5py's libver='latest') is not supported"));
  CHECK_THAT(refused("gzip.h5"), Contains("gzip.h5: x is compressed or filtered"));
  CHECK_THAT(refused("chunked.h5"), Contains("chunked.h5: x is stored in chunks"));
  CHECK_THAT(refused("big_endian.h5"), Contains("big_endian.h5: x is big-endian"));
  const std::vector<uint8_t> text = {'n', 'o', 't', ' ', 'h', 'd', 'f', '5'};
  CHECK_THAT(test::usage_error([&] { io::Hdf5File f(text, "t.h5"); }), Contains("t.h5: not an HDF5 file"));
}

TEST_CASE("HDF5: truncated and corrupted files end in one UsageError or a clean parse", "[hdf5][hostile]") {
  for (const auto& [name, bytes] : {std::pair{std::string("many.h5"), file_bytes("many.h5")},
                                    std::pair{std::string("model.weights.h5"), keras_weights()}}) {
    INFO(name);
    int refusals = 0, parsed = 0;
    auto attempt = [&](const std::vector<uint8_t>& b) {
      try {
        io::Hdf5File f(b, name);
        for (const io::Hdf5Dataset& d : f.datasets()) (void)f.floats(d);
        ++parsed;
      } catch (const UsageError& e) {
        CHECK(std::string(e.what()).find('\n') == std::string::npos);
        ++refusals;
      }
    };
    // Every truncation at a step through the file (every byte of the first 4 KiB).
    for (size_t n = 0; n < bytes.size(); n += n < 4096 ? 1 : 97)
      attempt(std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n)));
    // Seeded corruptions: one to eight bytes set to random values.
    nn::Rng rng(11);
    for (int k = 0; k < 3000; ++k) {
      std::vector<uint8_t> b = bytes;
      const uint64_t changes = 1 + rng.below(8);
      for (uint64_t c = 0; c < changes; ++c) b[rng.below(b.size())] = static_cast<uint8_t>(rng.below(256));
      attempt(b);
    }
    CHECK(refusals > 1000);
    CHECK(parsed > 0);
  }
}

TEST_CASE("HDF5 writer: what it writes the reader reads back, groups of any size in HDF5's name order", "[hdf5]") {
  io::Hdf5Writer w;
  w.add_group("vars");
  w.add_group("layers/flatten/vars");
  const std::vector<float> kernel = {1.5f, -2.0f, 0.25f, 3.0e-8f, -0.0f, 7.0f};
  w.add_floats("layers/conv2d/vars/0", {1, 2, 3}, kernel);
  const float lr = 0.001f;
  w.add_floats("optimizer/vars/1", {}, std::span<const float>(&lr, 1));
  w.add_int64("optimizer/vars/0", 1234567890123);
  // 300 entries: 38 symbol-table nodes, more than the B-tree's default 32 children.
  for (int i = 2; i < 302; ++i) {
    const float v = static_cast<float>(i);
    w.add_floats("optimizer/vars/" + std::to_string(i), {1}, std::span<const float>(&v, 1));
  }
  w.add_floats("empty/vars/0", {0, 4}, {});
  const std::string bytes = w.bytes();
  const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  const io::Hdf5File f(view, "written.h5");

  REQUIRE(f.datasets().size() == 304);
  const io::Hdf5Dataset* k = f.find("layers/conv2d/vars/0");
  REQUIRE(k != nullptr);
  CHECK(k->shape == std::vector<int64_t>{1, 2, 3});
  CHECK(f.floats(*k) == kernel);
  const io::Hdf5Dataset* it = f.find("optimizer/vars/0");
  REQUIRE(it != nullptr);
  CHECK(it->kind == 'i');
  CHECK(it->element_bytes == 8);
  CHECK(f.integer(*it) == 1234567890123);
  CHECK(f.floats(*f.find("optimizer/vars/1")) == std::vector<float>{lr});
  for (int i = 2; i < 302; ++i) {
    const io::Hdf5Dataset* d = f.find("optimizer/vars/" + std::to_string(i));
    REQUIRE(d != nullptr);
    CHECK(f.floats(*d) == std::vector<float>{static_cast<float>(i)});
  }
  CHECK(f.find("empty/vars/0")->elements() == 0);
  // HDF5 keeps a group's names in strcmp order: "10" before "2".
  std::vector<std::string> order;
  for (const io::Hdf5Dataset& d : f.datasets())
    if (d.path.starts_with("optimizer/vars/")) order.push_back(d.path.substr(15));
  CHECK(std::is_sorted(order.begin(), order.end()));
  CHECK(order[0] == "0");
  CHECK(order[2] == "10");

  if (const char* out = std::getenv("AXON_HDF5_WRITER_OUT")) std::ofstream(out, std::ios::binary) << bytes;
}

TEST_CASE("HDF5 writer: a path written twice, through a dataset, or of empty names is refused", "[hdf5]") {
  io::Hdf5Writer w;
  const float v = 1.0f;
  w.add_floats("a/b", {1}, std::span<const float>(&v, 1));
  CHECK_THROWS_WITH(w.add_floats("a/b", {1}, std::span<const float>(&v, 1)), Contains("written twice"));
  CHECK_THROWS_WITH(w.add_group("a/b/c"), Contains("a dataset lies on the path"));
  CHECK_THROWS_WITH(w.add_int64("a//c", 1), Contains("not a path of names"));
  CHECK_THROWS_WITH(w.add_floats("c", {2}, std::span<const float>(&v, 1)), Contains("takes 2 values, given 1"));
}
