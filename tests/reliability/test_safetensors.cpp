// The safetensors reader and writer: a round trip, and every way a header
// can lie refused with one message, never a read past the file.
#include "reliability_util.hpp"

#include <axon/error.hpp>
#include <axon/io/safetensors.hpp>

#include <catch2/catch.hpp>

#include <cstring>

using namespace axon;
using axon::test::usage_error;

namespace {

// A file whose header is `json` (unpadded) followed by `data`.
std::string file_with(const std::string& json, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t n = json.size();
  std::memcpy(out.data(), &n, 8);
  return out + json + data;
}

std::string parse_error(const std::string& bytes) {
  return usage_error([&] { io::parse_safetensors(bytes); });
}

}  // namespace

TEST_CASE("safetensors: what is written reads back, header aligned to 8 bytes", "[safetensors]") {
  io::SafetensorsWriter w;
  const float a[6] = {1, 2, 3, 4, 5, 6};
  w.add_f32("dense/kernel", {2, 3}, a);
  const int64_t step = 42;
  w.add("step", "I64", {}, {reinterpret_cast<const char*>(&step), sizeof step});
  w.add_f32("empty", {0, 3}, {});
  w.set_metadata("format", "test");
  const std::string bytes = w.bytes();
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  CHECK((8 + n) % 8 == 0);
  const io::SafetensorsFile f = io::parse_safetensors(bytes);
  CHECK(f.meta("format") == "test");
  CHECK(f.has_checksum());
  CHECK(f.checksum_ok());
  CHECK(f.f32("dense/kernel", {2, 3}) == std::vector<float>(a, a + 6));
  CHECK(f.f32("empty", {0, 3}).empty());
  REQUIRE(f.find("step") != nullptr);
  CHECK(f.find("step")->dtype == "I64");
  CHECK(f.data(*f.find("step")).size() == 8);
  CHECK_THAT(usage_error([&] { f.f32("dense/kernel", {3, 2}); }), Catch::Contains("has shape [2,3], expected [3,2]"));
  CHECK_THAT(usage_error([&] { f.f32("step", {}); }), Catch::Contains("is I64, not F32"));
  CHECK_THAT(usage_error([&] { f.f32("absent", {}); }), Catch::Contains("has no tensor absent"));
}

TEST_CASE("safetensors: a changed byte anywhere fails the checksum", "[safetensors]") {
  io::SafetensorsWriter w;
  const float a[4] = {1, 2, 3, 4};
  w.add_f32("w", {4}, a);
  w.set_metadata("epoch", "3");
  const std::string good = w.bytes();
  std::string data_flip = good;
  data_flip[data_flip.size() - 1] ^= 0x01;
  CHECK_FALSE(io::parse_safetensors(data_flip).checksum_ok());
  std::string meta_flip = good;
  meta_flip[meta_flip.find("\"3\"") + 1] = '4';
  CHECK_FALSE(io::parse_safetensors(meta_flip).checksum_ok());
  CHECK_FALSE(io::parse_safetensors(io::SafetensorsWriter().bytes(false)).has_checksum());
}

TEST_CASE("safetensors: hostile headers are refused", "[safetensors][hostile]") {
  const std::string f32x2 = "{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  const std::string eight(8, 'x');
  CHECK(io::parse_safetensors(file_with(f32x2, eight)).tensors().size() == 1);

  CHECK_THAT(parse_error("abc"), Catch::Contains("too short"));
  std::string huge(8, '\0');
  const uint64_t claim = uint64_t{1} << 62;
  std::memcpy(huge.data(), &claim, 8);
  CHECK_THAT(parse_error(huge + "{}"), Catch::Contains("more than the limit"));
  std::string beyond(8, '\0');
  const uint64_t hundred = 100;
  std::memcpy(beyond.data(), &hundred, 8);
  CHECK_THAT(parse_error(beyond + "{}"), Catch::Contains("holds only 2"));
  CHECK_THAT(parse_error(file_with("[1]", "")), Catch::Contains("does not start with '{'"));
  CHECK_THAT(parse_error(file_with("{\"t\":", "")), Catch::Contains("not valid JSON"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                   "\"t\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight)),
             Catch::Contains("names 't' twice"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}", eight)),
             Catch::Contains("unknown dtype 'F33'"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", eight)),
             Catch::Contains("make 12 bytes but data_offsets span 8"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
                                   eight)),
             Catch::Contains("too many"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", eight)),
             Catch::Contains("not a non-negative integer"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[2.0],\"data_offsets\":[0,8]}}", eight)),
             Catch::Contains("not a non-negative integer"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "1234")),
             Catch::Contains("do not fit the data section of 4 bytes"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", eight)),
             Catch::Contains("do not fit"));
  CHECK_THAT(parse_error(file_with("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                                   "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight)),
             Catch::Contains("overlapping"));
  CHECK_THAT(parse_error(file_with("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", eight)),
             Catch::Contains("leaving a hole"));
  CHECK_THAT(parse_error(file_with(f32x2, eight + "tail")), Catch::Contains("4 bytes after its last tensor"));
  CHECK_THAT(parse_error(file_with("{\"__metadata__\":{\"k\":1}}", "")), Catch::Contains("metadata 'k' is not a string"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", eight)),
             Catch::Contains("exactly dtype, shape and data_offsets"));
  CHECK_THAT(parse_error(file_with("{\"t\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
                                   "abcd")),
             Catch::Contains("at most 8 dimensions"));
  // Deep nesting within the cap: an error, not a stack overflow.
  CHECK_THAT(parse_error(file_with("{\"t\":" + std::string(100000, '[') + std::string(100000, ']') + "}", "")),
             Catch::Contains("tensor 't'"));
}
