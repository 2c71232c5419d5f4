// Files that lie, overflow, never end or are not files at all: each is one
// UsageError naming it, found before memory is spent on what it claims.
#include "reliability_util.hpp"

#include <axon/data/idx.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/limits.hpp>
#include <axon/train/atomic_file.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstring>

using namespace axon;
using axon::test::idx_bytes;
using axon::test::TempDir;
using axon::test::usage_error;

namespace {

std::string gzip_of(const TempDir& dir, const std::string& bytes) {
  const auto p = dir.path / "member.gz";
  test::write_gz(p, bytes);
  return test::read_all(p);
}

// A gzip member's last four bytes: the uncompressed length modulo 2^32.
void set_isize(std::string& gz, uint32_t n) {
  for (int i = 0; i < 4; ++i) gz[gz.size() - 4 + static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
}

}  // namespace

TEST_CASE("IDX: dimensions whose product wraps 64 bits are refused", "[hostile][idx]") {
  TempDir dir("dims");
  const auto p = dir.path / "images";
  // 4 x 2^31 x 2^31 = 2^64: wraps to 0 in a plain product.
  std::string h = idx_bytes(0x08, {4, 0x80000000u, 0x80000000u}, {});
  test::write_raw(p, h);
  CHECK_THAT(usage_error([&] { data::read_idx_header(p, 3); }),
             Catch::Contains(p.string()) && Catch::Contains("limit for one IDX file"));
  test::write_gz(dir.path / "images.gz", h);
  CHECK_THAT(usage_error([&] { data::read_idx(dir.path / "images.gz", 3); }), Catch::Contains("limit"));
}

TEST_CASE("IDX: a 32-byte gzip whose header and trailer claim 4 GiB costs no memory", "[hostile][idx]") {
  TempDir dir("gzlie");
  // The IDX header says 16 x 16384 x 16384 = 4 GiB; the stream holds 20 bytes;
  // the trailer's length field is forged to agree (it is modulo 2^32).
  std::string gz = gzip_of(dir, idx_bytes(0x08, {16, 16384, 16384}, std::vector<uint8_t>(4, 7)));
  set_isize(gz, 16);
  const auto p = dir.path / "train-images-idx3-ubyte.gz";
  test::write_raw(p, gz);
  CHECK(gz.size() < 64);
  // 4 GiB is above the limit for one IDX file: refused on the header.
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("limit"));
  // Just under the limit, with the trailer forged the same way: the data
  // are read as they come and stop at the stream's real end.
  gz = gzip_of(dir, idx_bytes(0x08, {4, 16384, 16383}, std::vector<uint8_t>(4, 7)));
  set_isize(gz, 4u * 16384u * 16383u + 16u);
  test::write_raw(p, gz);
  const double before = test::peak_rss_mib();
  // zlib finds the forged length once the member ends: "corrupt gzip data".
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains(p.string()) && Catch::Contains("gzip data"));
  CHECK(test::peak_rss_mib() - before < 16);
}

TEST_CASE("IDX: a gzip file of several members reads whole", "[hostile][idx]") {
  TempDir dir("members");
  std::vector<uint8_t> px(3 * 4 * 4);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 5);
  const std::string whole = idx_bytes(0x08, {3, 4, 4}, px);
  // Three members: the header, half the pixels, the rest (as `cat a.gz b.gz` makes).
  const std::string gz = gzip_of(dir, whole.substr(0, 16)) + gzip_of(dir, whole.substr(16, 20)) +
                         gzip_of(dir, whole.substr(36));
  const auto p = dir.path / "m.gz";
  test::write_raw(p, gz);
  const data::IdxArray a = data::read_idx(p, 3);
  CHECK(a.data == px);
  // Bytes after the last member that are not a member are corruption.
  test::write_raw(p, gz + "garbage!");
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("not gzip"));
  test::write_raw(p, gz + "x");
  CHECK_THAT(usage_error([&] { data::read_idx(p, 3); }), Catch::Contains("stray byte"));
}

TEST_CASE("IDX: a data file that is a FIFO or a folder is refused at once", "[hostile][idx]") {
  TempDir dir("fifo");
  const auto fifo = dir.path / "labels";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(usage_error([&] { data::read_idx(fifo, 1); }), Catch::Contains("not a regular file"));
  CHECK_THAT(usage_error([&] { data::read_idx(dir.path, 1); }), Catch::Contains("not a regular file"));
}

TEST_CASE("MNIST folder: images above the size limit are refused before they are read", "[hostile][mnist]") {
  TempDir dir("bigimage");
  test::write_dataset(dir.path, 10, 10, true);
  // One 4096x4096 image: 16 MiB of zeros, 16 KiB compressed.
  test::write_gz(dir.path / "train-images-idx3-ubyte.gz",
                 idx_bytes(0x08, {10, 4096, 4096}, std::vector<uint8_t>(size_t{10} * 4096 * 4096 / 64, 0)));
  CHECK_THAT(usage_error([&] { data::load_image_dataset(dir.path); }),
             Catch::Contains("4096x4096") && Catch::Contains("limit of 64x64"));
  // At the limit they load.
  TempDir ok("limitimage");
  test::write_dataset(ok.path, 10, 10, false, limits::kMaxImageSide, limits::kMaxImageSide);
  CHECK(data::load_image_dataset(ok.path).train.rows == limits::kMaxImageSide);
}

TEST_CASE("read_regular_file: folders, devices, FIFOs and oversized files are refused", "[hostile][io]") {
  TempDir dir("readfile");
  const auto f = dir.path / "w.bin";
  test::write_raw(f, "0123456789");
  CHECK(io::read_regular_file(f, 10, "weights file") == "0123456789");
  CHECK_THAT(usage_error([&] { io::read_regular_file(f, 9, "weights file"); }),
             Catch::Contains("weights file " + f.string()) && Catch::Contains("is 10 bytes, more than the 9"));
  CHECK_THAT(usage_error([&] { io::read_regular_file(dir.path, 100, "weights file"); }), Catch::Contains("a folder"));
  CHECK_THAT(usage_error([&] { io::read_regular_file("/dev/zero", 100, "weights file"); }),
             Catch::Contains("a character device"));
  const auto fifo = dir.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(usage_error([&] { io::read_regular_file(fifo, 100, "weights file"); }), Catch::Contains("a FIFO"));
  CHECK_THAT(usage_error([&] { io::read_regular_file(dir.path / "absent", 100, "weights file"); }),
             Catch::Contains("cannot open"));
}

TEST_CASE("atomic files: special targets refused, links followed, long names and stale temporaries", "[hostile][output]") {
  TempDir dir("outputs");
  // A FIFO (or a device) is never replaced by a regular file.
  const auto fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(usage_error([&] { train::check_output_file(fifo, "--save"); }),
             Catch::Contains("--save " + fifo.string() + ": is a FIFO"));
  CHECK_THAT(usage_error([&] { train::write_file_atomically(fifo, "x"); }), Catch::Contains("a FIFO"));
  struct stat st{};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK_THAT(usage_error([&] { train::check_output_file("/dev/null", "--metrics-csv"); }),
             Catch::Contains("a character device"));
  CHECK_THAT(usage_error([&] { train::check_output_file("", "--save"); }), Catch::Contains("--save: the file name is empty"));
  CHECK_THAT(usage_error([&] { train::check_output_file(dir.path, "--save"); }), Catch::Contains("a folder"));
  CHECK_THAT(usage_error([&] { train::check_output_file(dir.path / "no" / "x", "--save"); }),
             Catch::Contains("does not exist"));

  // A link to a regular file: the file gets the bytes, the link stays a link.
  const auto real = dir.path / "real.txt", link = dir.path / "link.txt";
  test::write_raw(real, "old");
  std::filesystem::create_symlink(real, link);
  train::write_file_atomically(link, "new");
  CHECK(std::filesystem::is_symlink(link));
  CHECK(test::read_all(real) == "new");
  // A link to a FIFO is refused like the FIFO.
  const auto to_fifo = dir.path / "to-pipe";
  std::filesystem::create_symlink(fifo, to_fifo);
  CHECK_THAT(usage_error([&] { train::check_output_file(to_fifo, "--save"); }), Catch::Contains("a FIFO"));

  // A 250-byte name: its temporary still fits the file system's limit.
  const auto longname = dir.path / std::string(250, 'w');
  train::check_output_file(longname, "--save");
  train::write_file_atomically(longname, "long");
  CHECK(test::read_all(longname) == "long");
  CHECK_THAT(usage_error([&] { train::check_output_file(dir.path / std::string(NAME_MAX + 1, 'x'), "--save"); }),
             Catch::Contains("longer than"));

  // A killed writer's temporary (its pid is gone) is removed by the next write.
  const auto out = dir.path / "m.csv";
  const auto stale = dir.path / ".m.csv.tmp.2147483646";
  test::write_raw(stale, "half");
  train::write_file_atomically(out, "whole");
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(test::read_all(out) == "whole");

  CHECK(train::same_file(dir.path / "a" / ".." / "real.txt", link));
  CHECK_FALSE(train::same_file(real, out));
}
