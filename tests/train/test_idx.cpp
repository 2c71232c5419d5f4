// The IDX reader and the data-folder loader: good files load; truncated,
// corrupt or lying files are one UsageError naming the file and the fault.
#include "train_test_util.hpp"

#include <axon/data/idx.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>

#include <catch2/catch.hpp>

using namespace axon;
using axon::test::idx_bytes;
using axon::test::TempDir;
using axon::test::usage_error;

namespace {

std::vector<uint8_t> bytes(size_t n, uint8_t start = 0) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(start + i);
  return v;
}

}  // namespace

TEST_CASE("IDX: raw and gzip files read back exactly", "[idx]") {
  TempDir dir("idx-ok");
  const auto payload = bytes(3 * 4 * 5, 1);
  for (bool gz : {false, true}) {
    auto p = dir.path / (gz ? "a.gz" : "a");
    (gz ? test::write_gz : test::write_raw)(p, idx_bytes(0x08, {3, 4, 5}, payload));
    data::IdxArray a = data::read_idx(p, 3);
    CHECK(a.dims == std::vector<int64_t>{3, 4, 5});
    CHECK(a.data == payload);
    data::IdxHeader h = data::read_idx_header(p, 3);
    CHECK(h.gzip == gz);
    CHECK(h.payload_bytes() == payload.size());
  }
}

TEST_CASE("IDX: a bad header is named", "[idx]") {
  TempDir dir("idx-header");
  auto p = dir.path / "f";
  for (bool gz : {false, true}) {
    auto write = gz ? test::write_gz : test::write_raw;
    INFO("gzip " << gz);

    write(p, "\x12\x34\x08\x03");
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("bad magic") && Catch::Contains(p.string()));

    write(p, idx_bytes(0x0D, {2, 2, 2}, bytes(8 * 4)));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("float"));

    write(p, idx_bytes(0x08, {8}, bytes(8)));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("rank 1, expected 3"));

    write(p, idx_bytes(0x08, {2, 0, 2}, {}));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("dimension 1 is 0"));

    write(p, std::string("\0\0\x08", 3));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("truncated"));
  }
}

TEST_CASE("IDX: truncated, padded and lying raw files are rejected before allocating", "[idx]") {
  TempDir dir("idx-raw");
  auto p = dir.path / "f";
  const std::string good = idx_bytes(0x08, {10, 4, 4}, bytes(160));

  test::write_raw(p, good.substr(0, good.size() - 1));
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }),
             Catch::Contains("truncated") && Catch::Contains("160 data bytes") && Catch::Contains("159"));

  test::write_raw(p, good + "xy");
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("2 bytes after"));

  // A header that claims 4 billion images must fail fast, not allocate.
  test::write_raw(p, idx_bytes(0x08, {0xffffffffu, 28, 28}, bytes(784)));
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("promise more than"));
  test::write_raw(p, idx_bytes(0x08, {1000000, 28, 28}, bytes(784)));
  CHECK_THAT(usage_error([&] { data::read_idx_header(p, 3); }), Catch::Contains("truncated"));
}

TEST_CASE("IDX: truncated, corrupt and lying gzip files are rejected", "[idx]") {
  TempDir dir("idx-gz");
  auto p = dir.path / "f.gz";
  std::vector<uint8_t> payload(5000);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  const std::string good = idx_bytes(0x08, {50, 10, 10}, payload);
  test::write_gz(p, good);
  const std::string gz = test::read_all(p);

  SECTION("cut short") {
    test::write_raw(p, gz.substr(0, gz.size() / 2));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains(p.string()));
  }
  SECTION("a flipped byte in the deflate stream") {
    std::string bad = gz;
    bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x5a);
    test::write_raw(p, bad);
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains(p.string()));
  }
  SECTION("a header that promises more images than the stream holds") {
    std::string lying = good;
    lying[7] = 51;  // 51 images, 50 present
    test::write_gz(p, lying);
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("truncated gzip data"));
  }
  SECTION("a header that promises fewer images than the stream holds") {
    std::string lying = good;
    lying[7] = 49;
    test::write_gz(p, lying);
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains(p.string()));
  }
  SECTION("a gzip file too short to have a trailer") {
    test::write_raw(p, gz.substr(0, 10));
    CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("truncated gzip"));
  }
}

TEST_CASE("MNIST folder: loads both splits, raw or gzip", "[mnist]") {
  for (bool gz : {false, true}) {
    TempDir dir("mnist-ok");
    test::write_dataset(dir.path, 30, 12, gz);
    data::ImageDataset ds = data::load_image_dataset(dir.path);
    CHECK(ds.train.count == 30);
    CHECK(ds.test.count == 12);
    CHECK(ds.train.rows == 28);
    CHECK(ds.train.cols == 28);
    CHECK(ds.train.labels[13] == 3);
    CHECK(ds.train.images[784 * 2 + 5] == (2 * 7 + 5) % 256);
    ds.train.truncate(7);
    CHECK(ds.train.count == 7);
    CHECK(ds.train.images.size() == 7u * 784u);
  }
}

TEST_CASE("MNIST folder: missing folder or files name the package", "[mnist]") {
  TempDir dir("mnist-missing");
  std::string m = usage_error([&] { data::load_image_dataset(dir.path / "nope"); });
  CHECK_THAT(m, Catch::Contains("does not exist") && Catch::Contains("apt-get install dataset-fashion-mnist") &&
                    Catch::Contains("train-images-idx3-ubyte[.gz]") && Catch::Contains("nope"));
  test::write_dataset(dir.path, 5, 5, true);
  std::filesystem::remove(dir.path / "t10k-labels-idx1-ubyte.gz");
  m = usage_error([&] { data::load_image_dataset(dir.path); });
  CHECK_THAT(m, Catch::Contains("lacks t10k-labels-idx1-ubyte[.gz]") && Catch::Contains("dataset-fashion-mnist"));
}

TEST_CASE("MNIST folder: counts and label range are checked", "[mnist]") {
  TempDir dir("mnist-bad");
  test::write_dataset(dir.path, 20, 10, false);
  SECTION("image and label counts differ") {
    test::write_raw(dir.path / "train-labels-idx1-ubyte", idx_bytes(0x08, {19}, bytes(19, 0)));
    std::string m = usage_error([&] { data::load_image_dataset(dir.path); });
    CHECK_THAT(m, Catch::Contains("20 images") && Catch::Contains("19 labels"));
  }
  SECTION("a label outside 0..9") {
    std::vector<uint8_t> labels(20, 1);
    labels[17] = 10;
    test::write_raw(dir.path / "train-labels-idx1-ubyte", idx_bytes(0x08, {20}, labels));
    std::string m = usage_error([&] { data::load_image_dataset(dir.path); });
    CHECK_THAT(m, Catch::Contains("label 10 at index 17") && Catch::Contains("train-labels-idx1-ubyte"));
  }
  SECTION("splits of different image sizes") {
    test::TempDir other("mnist-size");
    test::write_dataset(other.path, 4, 4, false, 14, 14);
    std::filesystem::copy_file(other.path / "t10k-images-idx3-ubyte", dir.path / "t10k-images-idx3-ubyte",
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(other.path / "t10k-labels-idx1-ubyte", dir.path / "t10k-labels-idx1-ubyte",
                               std::filesystem::copy_options::overwrite_existing);
    CHECK_THAT(usage_error([&] { data::load_image_dataset(dir.path); }), Catch::Contains("14x14"));
  }
}

TEST_CASE("MNIST folder: the installed Fashion-MNIST loads", "[mnist][dataset]") {
  // tools/install-deps installs the data set; without it this test fails.
  REQUIRE_FALSE(data::find_idx_file(data::kDefaultDataDir, "train-images-idx3-ubyte").empty());
  data::ImageDataset ds = data::load_image_dataset(data::kDefaultDataDir);
  CHECK(ds.train.count == 60000);
  CHECK(ds.test.count == 10000);
  CHECK(ds.train.rows == 28);
  std::vector<int> per_class(10, 0);
  for (uint8_t l : ds.train.labels) ++per_class[l];
  for (int c : per_class) CHECK(c == 6000);  // Fashion-MNIST is balanced
}
