// The .npy header parser on what NumPy writes and on what it must refuse.
#include <axon/data/npy.hpp>
#include <axon/data/numpy_random.hpp>
#include <axon/error.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using namespace axon;

namespace {

// A .npy header as numpy.lib.format writes it: magic, version, length, dict, padding, newline.
std::string npy(const std::string& dict, int version = 1) {
  std::string text = dict;
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + text.size() + 1) % 64 != 0) text += ' ';
  text += '\n';
  std::string out = std::string("\x93NUMPY", 6) + static_cast<char>(version) + '\0';
  const auto n = static_cast<uint32_t>(text.size());
  out += static_cast<char>(n & 0xff);
  out += static_cast<char>((n >> 8) & 0xff);
  if (version != 1) {
    out += static_cast<char>((n >> 16) & 0xff);
    out += static_cast<char>((n >> 24) & 0xff);
  }
  return out + text;
}

data::NpyHeader parse(const std::string& bytes, uint64_t limit = uint64_t{1} << 32) {
  return data::parse_npy_header(bytes, "x.npy", limit);
}

std::string refusal(const std::string& bytes, uint64_t limit = uint64_t{1} << 32) {
  try {
    parse(bytes, limit);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("npy header: what NumPy writes", "[npy]") {
  const data::NpyHeader h = parse(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (60000, 28, 28), }"));
  CHECK(h.kind == 'u');
  CHECK(h.item_bytes == 1);
  CHECK_FALSE(h.fortran_order);
  CHECK(h.shape == std::vector<int64_t>{60000, 28, 28});
  CHECK(h.header_bytes == 128);
  CHECK(h.data_bytes() == 60000u * 784u);
  CHECK(h.dtype_name() == "uint8");

  const data::NpyHeader f = parse(npy("{'descr': '>f8', 'fortran_order': True, 'shape': (3,), }", 2));
  CHECK(f.big_endian);
  CHECK(f.fortran_order);
  CHECK(f.shape == std::vector<int64_t>{3});
  CHECK(f.header_bytes == 128);
  CHECK(f.dtype_name() == "float64 (big-endian)");
  // A scalar, a zero-length axis, Python 2's long suffix, other key orders and quotes.
  CHECK(parse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }")).elements() == 1);
  CHECK(parse(npy("{'descr': '<i8', 'fortran_order': False, 'shape': (0, 5), }")).data_bytes() == 0);
  CHECK(parse(npy("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<f4\"}")).elements() == 6);
  CHECK(parse(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (7,)}", 3)).shape.size() == 1);
}

TEST_CASE("npy header: malformed and unsafe headers are refused", "[npy]") {
  const std::string ok = "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK_THAT(refusal(npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }")),
             Catch::Contains("x.npy: holds an object array") && Catch::Contains("allow_pickle=False"));
  CHECK_THAT(refusal(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }")),
             Catch::Contains("structured array"));
  CHECK_THAT(refusal(npy("{'descr': '<U10', 'fortran_order': False, 'shape': (2,), }")),
             Catch::Contains("'<U10' is not a number type"));
  CHECK_THAT(refusal(npy("{'descr': '<f3', 'fortran_order': False, 'shape': (2,), }")),
             Catch::Contains("not a number type"));
  CHECK_THAT(refusal("\x93NUMPZ\x01\x00" + npy(ok).substr(8)), Catch::Contains("not a .npy file"));
  CHECK_THAT(refusal(npy(ok).substr(0, 9)), Catch::Contains("not a .npy file"));
  std::string v4 = npy(ok);
  v4[6] = 4;
  CHECK_THAT(refusal(v4), Catch::Contains("version 4.0"));
  CHECK_THAT(refusal(npy(ok).substr(0, 40)), Catch::Contains("truncated"));
  // NumPy's limit on a header's length, checked before reading it.
  std::string long_header = std::string("\x93NUMPY\x02\x00", 8) + std::string("\x11\x27\x00\x00", 4);
  CHECK_THAT(refusal(long_header), Catch::Contains("10001 bytes") && Catch::Contains("10000"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2, -3), }")),
             Catch::Contains("negative (-3)"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': False}")), Catch::Contains("lacks one of"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'descr': '|u1', 'fortran_order': False, 'shape': (2,)}")),
             Catch::Contains("repeated key 'descr'"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': Maybe, 'shape': (2,)}")),
             Catch::Contains("True or False"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,), 'x': 1}")),
             Catch::Contains("unexpected or repeated key 'x'"));
  CHECK_THAT(refusal(npy("{'descr': '|u1, 'fortran_order': False, 'shape': (2,)}")), Catch::Contains("not a number type"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,)")), Catch::Contains("bad .npy header"));
  CHECK_THAT(refusal(npy("{'descr': '|u1', 'fortran_order': False, 'shape': (2,)} junk")),
             Catch::Contains("text after the dict"));
  CHECK_THAT(refusal(npy("{'descr': '\\x41', 'fortran_order': False, 'shape': (2,)}")), Catch::Contains("escapes"));
  // Dimensions whose product exceeds the limit (or 64 bits) are refused before any multiplication wraps.
  CHECK_THAT(refusal(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1048576, 1048576), }")),
             Catch::Contains("promises more than 4294967296 data bytes"));
  CHECK_THAT(refusal(npy(ok), 5), Catch::Contains("(2, 3) of uint8 promises more than 5"));
  CHECK(parse(npy(ok), 6).data_bytes() == 6);
}

TEST_CASE("NumPy's RandomState(seed).shuffle: the same orders as NumPy 1.24", "[npy]") {
  // From NumPy: x = list(range(n)); np.random.RandomState(seed).shuffle(x).
  const struct {
    uint32_t seed;
    std::vector<int> order;
  } cases[] = {{42, {8, 1, 5, 0, 7, 2, 9, 4, 3, 6}},
               {1337, {6, 2, 1, 3, 0, 4, 5}},
               {0, {18, 1, 19, 8, 10, 17, 6, 13, 4, 2, 5, 14, 9, 7, 16, 11, 3, 0, 15, 12}},
               {4294967295u, {4, 1, 0, 2, 3}}};
  for (const auto& c : cases) {
    std::vector<int> v(c.order.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>(i);
    data::NumpyRandomState(c.seed).shuffle(v);
    CHECK(v == c.order);
  }
}
