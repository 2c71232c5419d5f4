// The image decoders and the resize against TensorFlow (image_goldens.txt,
// written by tools/tf-goldens/image_goldens.py): every file decoded as
// tf.io.decode_image decodes it, byte for byte; where TensorFlow refuses a
// channel count (GIF as gray, JPEG as RGBA, BMP as gray) axon converts, and
// that is checked against the formula; tf.image.resize's bilinear results
// within 1e-5 of the 0..255 range (relative). Hostile images: each refused
// with one line naming the file and the fault, before any large allocation.
#include <axon/data/image_decode.hpp>
#include <axon/data/image_folder.hpp>
#include <axon/data/resize.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <catch2/catch.hpp>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace axon;

namespace {

const std::string kDir = AXON_DATASETS_DIR;

std::vector<uint8_t> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<uint8_t> unhex(const std::string& s) {
  std::vector<uint8_t> out(s.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoi(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

std::vector<std::string> golden_lines(const std::string& kind) {
  std::ifstream in(kDir + "/image_goldens.txt");
  REQUIRE(in.good());
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);)
    if (line.rfind(kind + " ", 0) == 0) out.push_back(line);
  return out;
}

std::string image_refusal(const std::vector<uint8_t>& bytes, int channels = 3, const std::string& name = "x.png") {
  try {
    data::decode_image(bytes, channels, name);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("image decoders: as tf.io.decode_image, byte for byte", "[images]") {
  const std::vector<std::string> lines = golden_lines("decode");
  REQUIRE(lines.size() >= 45);
  int compared = 0, converted = 0;
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string kind, file, rows_or_refused;
    int channels = 0;
    in >> kind >> file >> channels >> rows_or_refused;
    INFO(file << " as " << channels << " channels");
    const std::vector<uint8_t> bytes = file_bytes(kDir + "/images/" + file);
    const data::DecodedImage img = data::decode_image(bytes, channels, file);
    CHECK(img.channels == channels);
    if (rows_or_refused == "refused") {
      // TensorFlow refuses; axon converts from the format's own channels.
      const data::DecodedImage rgb = data::decode_image(bytes, 3, file);
      REQUIRE(img.pixels.size() == static_cast<size_t>(img.rows * img.cols * channels));
      for (int64_t p = 0; p < img.rows * img.cols; ++p) {
        const uint8_t* q = &rgb.pixels[static_cast<size_t>(p * 3)];
        if (channels == 1)
          REQUIRE(img.pixels[static_cast<size_t>(p)] == (299 * q[0] + 587 * q[1] + 114 * q[2] + 500) / 1000);
        else
          REQUIRE(std::memcmp(&img.pixels[static_cast<size_t>(p * 4)], q, 3) == 0);
      }
      ++converted;
      continue;
    }
    int64_t cols = 0, ch = 0;
    std::string hex;
    in >> cols >> ch >> hex;
    CHECK(img.rows == std::stoll(rows_or_refused));
    CHECK(img.cols == cols);
    CHECK(img.pixels == unhex(hex));
    ++compared;
  }
  CHECK(compared >= 35);
  CHECK(converted >= 5);
}

TEST_CASE("bilinear resize: tf.image.resize's values within 1e-5", "[images]") {
  const std::vector<std::string> lines = golden_lines("resize");
  REQUIRE(lines.size() >= 16);
  double worst = 0;
  for (const std::string& line : lines) {
    std::istringstream in(line);
    std::string kind, name, in_hex, out_hex;
    int64_t rows = 0, cols = 0, ch = 0, out_rows = 0, out_cols = 0;
    in >> kind >> name >> rows >> cols >> ch >> in_hex >> out_rows >> out_cols >> out_hex;
    const std::vector<uint8_t> pixels = unhex(in_hex), expected_bytes = unhex(out_hex);
    std::vector<float> expected(expected_bytes.size() / 4), got(expected.size());
    std::memcpy(expected.data(), expected_bytes.data(), expected_bytes.size());
    data::resize_bilinear(pixels, rows, cols, ch, got.data(), out_rows, out_cols);
    for (size_t i = 0; i < got.size(); ++i) {
      INFO(name << " to " << out_rows << "x" << out_cols << " at " << i);
      // 1e-5 of the pixel range: a few float32 ulps at 255.
      REQUIRE(std::abs(got[i] - expected[i]) <= 1e-5 * 255);
      worst = std::max(worst, static_cast<double>(std::abs(got[i] - expected[i])));
    }
  }
  WARN("largest difference from TensorFlow: " << worst);
}

TEST_CASE("image decoders: truncated, corrupt and oversized images are refused", "[images][hostile]") {
  for (const char* file : {"rgb.png", "color420.jpg", "progressive.jpg", "rgb24.bmp", "palette.gif"}) {
    INFO(file);
    const std::vector<uint8_t> whole = file_bytes(kDir + "/images/" + file);
    const std::vector<uint8_t> cut(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(whole.size() * 2 / 3));
    CHECK_THAT(image_refusal(cut, 3, file), Catch::StartsWith(std::string(file) + ": ") &&
                                                (Catch::Contains("truncated") || Catch::Contains("corrupt")));
    std::vector<uint8_t> flipped = whole;
    for (size_t i = whole.size() / 2; i < whole.size() / 2 + 16 && i < whole.size(); ++i) flipped[i] ^= 0x5A;
    const std::string r = image_refusal(flipped, 3, file);
    // A flipped byte in pixel data may still decode (BMP, JPEG entropy data); never anything else than a refusal.
    CHECK((r == "(accepted)" || r.rfind(std::string(file) + ": ", 0) == 0));
  }
  // A PNG whose header claims 60000 x 60000 pixels (its CRC made right): refused from its header.
  std::vector<uint8_t> png = file_bytes(kDir + "/images/rgb.png");
  for (int at : {16, 20}) {
    png[static_cast<size_t>(at)] = 0;
    png[static_cast<size_t>(at) + 1] = 0;
    png[static_cast<size_t>(at) + 2] = 0xEA;
    png[static_cast<size_t>(at) + 3] = 0x60;
  }
  const uLong crc = crc32(0, png.data() + 12, 17);  // the IHDR chunk's type and data
  for (int i = 0; i < 4; ++i) png[static_cast<size_t>(29 + i)] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  CHECK_THAT(image_refusal(png), Catch::Contains("x.png: PNG header claims 60000 x 60000 pixels") &&
                                     Catch::Contains(std::to_string(limits::kMaxImagePixels)));
  data::ImageHeader h;
  CHECK_THROWS_WITH(data::read_image_header(png, "big.png", h), Catch::Contains("60000 x 60000"));
  CHECK_THAT(image_refusal({}), Catch::Contains("empty file"));
  CHECK_THAT(image_refusal({'G', 'I', 'F'}), Catch::Contains("not a PNG, JPEG, BMP or GIF"));
  CHECK_THAT(image_refusal({'B', 'M', 1, 2}), Catch::Contains("truncated BMP"));
  CHECK_THAT(image_refusal(file_bytes(kDir + "/images/rgb.png"), 2), Catch::Contains("1, 3 or 4 channels"));
}

TEST_CASE("image headers: format, size and gray from the first bytes", "[images]") {
  const struct {
    const char* file;
    data::ImageFormat format;
    int64_t rows, cols;
    bool gray;
  } cases[] = {{"gray8.png", data::ImageFormat::kPng, 9, 13, true},   {"rgba.png", data::ImageFormat::kPng, 9, 13, false},
               {"gray.jpg", data::ImageFormat::kJpeg, 12, 17, true},  {"color420.jpg", data::ImageFormat::kJpeg, 21, 30, false},
               {"gray8.bmp", data::ImageFormat::kBmp, 9, 13, true},   {"rgb24.bmp", data::ImageFormat::kBmp, 9, 13, false},
               {"palette.gif", data::ImageFormat::kGif, 9, 13, false}};
  for (const auto& c : cases) {
    INFO(c.file);
    data::ImageHeader h;
    REQUIRE(data::read_image_header(file_bytes(kDir + "/images/" + c.file), c.file, h));
    CHECK(h.format == c.format);
    CHECK(h.rows == c.rows);
    CHECK(h.cols == c.cols);
    CHECK(h.gray == c.gray);
  }
}

TEST_CASE("image folder: Keras' classes, files, order and validation split", "[images]") {
  std::vector<std::string> classes;
  std::vector<std::pair<int, std::string>> train, validation;
  for (const std::string& line : golden_lines("classes")) {
    std::istringstream in(line.substr(8));
    for (std::string n; in >> n;) classes.push_back(n);
  }
  for (const std::string& line : golden_lines("split")) {
    std::istringstream in(line);
    std::string kind, subset, path;
    int label = 0;
    in >> kind >> subset >> label >> path;
    (subset == "training" ? train : validation).emplace_back(label, path);
  }
  REQUIRE(classes.size() == 3);
  REQUIRE(train.size() + validation.size() == 14);
  data::ImageFolderOptions o;
  o.validation_split = 0.25;
  o.seed = 7;
  o.channels = 1;
  o.resize = true;
  o.rows = 9;
  o.cols = 13;
  const std::string root = kDir + "/folder";
  const data::ImageFolder f = data::load_image_folder(root, o);
  CHECK(f.class_names == classes);
  for (auto [source, expected] : {std::pair{f.train.get(), &train}, std::pair{f.validation.get(), &validation}}) {
    REQUIRE(source != nullptr);
    const std::vector<std::string>* paths = data::image_paths(*source);
    REQUIRE(paths != nullptr);
    REQUIRE(paths->size() == expected->size());
    for (size_t i = 0; i < paths->size(); ++i) {
      CHECK((*paths)[i] == root + "/" + (*expected)[i].second);
      CHECK(source->label(static_cast<int64_t>(i)) == (*expected)[i].first);
    }
  }
  // Without a split: Keras' order before its shuffle (classes, then folders, then names).
  o.validation_split = 0;
  const data::ImageFolder all = data::load_image_folder(root, o);
  const std::vector<std::string> sorted = {"Fish/e.jpeg", "Fish/f.gif",       "Fish/g.png",   "Fish/h.png",
                                           "cat/1.png",   "cat/10.png",       "cat/2.png",    "cat/x.bmp",
                                           "dog/a.PNG",   "dog/b.png",        "dog/c.jpg",    "dog/sub/z.png",
                                           "dog/sub/deeper/y.Jpeg", "dog/sub2/x.png"};
  const std::vector<std::string>* paths = data::image_paths(*all.train);
  REQUIRE(paths->size() == sorted.size());
  for (size_t i = 0; i < sorted.size(); ++i) CHECK((*paths)[i] == root + "/" + sorted[i]);
  CHECK(all.validation == nullptr);
  // Every image decodes and resizes to 9 x 13 x 1 floats.
  std::vector<uint8_t> sample(static_cast<size_t>(all.train->layout().bytes()));
  CHECK(all.train->layout().format == data::PixelFormat::kFloat255);
  for (int64_t i = 0; i < all.train->size(); ++i) all.train->read(i, sample.data());
}
