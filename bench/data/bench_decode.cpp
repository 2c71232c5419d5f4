// Decoding throughput of the image folders' front end on one core: Fashion-
// MNIST's images encoded in memory as PNG (libpng) and JPEG (TurboJPEG,
// quality 90) at 28x28 gray, and the same upscaled to 224x224 RGB (a photo's
// size after a typical resize), each decoded by data::decode_image as
// training does, over and over for about a second; images/s and MB/s of
// pixels. Usage: axon-bench-decode [--data DIR] [--images N]
#include <axon/data/image_decode.hpp>
#include <axon/data/mnist.hpp>
#include <axon/data/resize.hpp>

#include <png.h>
#include <turbojpeg.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace axon;

namespace {

std::vector<uint8_t> encode_png(const uint8_t* pixels, int rows, int cols, int channels) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(cols);
  img.height = static_cast<png_uint_32>(rows);
  img.format = channels == 1 ? PNG_FORMAT_GRAY : PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&img, nullptr, &size, 0, pixels, 0, nullptr)) throw std::runtime_error(img.message);
  std::vector<uint8_t> out(size);
  if (!png_image_write_to_memory(&img, out.data(), &size, 0, pixels, 0, nullptr)) throw std::runtime_error(img.message);
  out.resize(size);
  return out;
}

std::vector<uint8_t> encode_jpeg(const uint8_t* pixels, int rows, int cols, int channels) {
  tjhandle tj = tjInitCompress();
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  if (tjCompress2(tj, pixels, cols, 0, rows, channels == 1 ? TJPF_GRAY : TJPF_RGB, &buf, &size,
                  channels == 1 ? TJSAMP_GRAY : TJSAMP_420, 90, 0) != 0)
    throw std::runtime_error(tjGetErrorStr2(tj));
  std::vector<uint8_t> out(buf, buf + size);
  tjFree(buf);
  tjDestroy(tj);
  return out;
}

void measure(const char* what, const std::vector<std::vector<uint8_t>>& files, int channels, int64_t pixel_bytes) {
  using Clock = std::chrono::steady_clock;
  size_t decoded = 0;
  const auto t0 = Clock::now();
  double s = 0;
  while (s < 1.0) {
    for (const auto& f : files) {
      const data::DecodedImage img = data::decode_image(f, channels, "bench");
      decoded += img.pixels.empty() ? 0 : 1;
    }
    s = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  double bytes = 0;
  for (const auto& f : files) bytes += static_cast<double>(f.size());
  std::printf("%-26s %8.0f images/s per core  %7.1f MB/s of pixels  (%.0f bytes a file)\n", what,
              static_cast<double>(decoded) / s, static_cast<double>(decoded) * static_cast<double>(pixel_bytes) / s / 1e6,
              bytes / static_cast<double>(files.size()));
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = data::kDefaultDataDir;
  int64_t n = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--data") dir = argv[i + 1];
    else if (std::string(argv[i]) == "--images") n = std::stoll(argv[i + 1]);
  }
  try {
    data::ImageSet set = data::load_split(dir, "t10k");
    set.truncate(n);
    std::vector<std::vector<uint8_t>> png, jpeg, png_big, jpeg_big;
    std::vector<float> up(224 * 224);
    std::vector<uint8_t> rgb(224 * 224 * 3);
    for (int64_t i = 0; i < set.count; ++i) {
      const uint8_t* px = set.images.data() + i * 784;
      png.push_back(encode_png(px, 28, 28, 1));
      jpeg.push_back(encode_jpeg(px, 28, 28, 1));
      if (i < n / 10) {  // fewer big ones: each takes longer
        data::resize_bilinear({px, 784}, 28, 28, 1, up.data(), 224, 224);
        for (size_t p = 0; p < up.size(); ++p)
          for (int c = 0; c < 3; ++c) rgb[p * 3 + static_cast<size_t>(c)] = static_cast<uint8_t>(up[p] * (0.6f + 0.2f * static_cast<float>(c)));
        png_big.push_back(encode_png(rgb.data(), 224, 224, 3));
        jpeg_big.push_back(encode_jpeg(rgb.data(), 224, 224, 3));
      }
    }
    std::printf("decoding with data::decode_image on one core (%lld Fashion-MNIST test images)\n",
                static_cast<long long>(set.count));
    measure("PNG 28x28 gray", png, 1, 784);
    measure("JPEG 28x28 gray", jpeg, 1, 784);
    measure("PNG 224x224 RGB", png_big, 3, 224 * 224 * 3);
    measure("JPEG 224x224 RGB", jpeg_big, 3, 224 * 224 * 3);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "axon-bench-decode: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
