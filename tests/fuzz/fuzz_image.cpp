// The image front ends (PNG through libpng, JPEG through TurboJPEG, BMP,
// GIF through giflib) on arbitrary bytes: the header reader, then a decode
// to 1, 3 and 4 channels and a bilinear resize. Each returns an image of the
// size its header gave, or throws UsageError; none allocates past the pixel
// limit or reads past the input.
#include "check_message.hpp"

#include <axon/data/image_decode.hpp>
#include <axon/data/resize.hpp>
#include <axon/error.hpp>

#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  axon::data::ImageHeader h;
  bool known = false;
  try {
    known = axon::data::read_image_header(bytes, "fuzz", h);
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  for (int channels : {1, 3, 4}) {
    try {
      const axon::data::DecodedImage img = axon::data::decode_image(bytes, channels, "fuzz");
      if (img.channels != channels || img.pixels.size() != static_cast<size_t>(img.rows * img.cols * channels))
        std::abort();
      // The header read first promised this size (a GIF's is its screen).
      if (known && (img.rows != h.rows || img.cols != h.cols)) std::abort();
      std::vector<float> out(static_cast<size_t>(5 * 7 * channels));
      axon::data::resize_bilinear(img.pixels, img.rows, img.cols, channels, out.data(), 5, 7);
      for (float v : out)
        if (!(v >= 0 && v <= 255)) std::abort();
    } catch (const axon::UsageError& e) {
      axon::fuzz::check_message(e);
    }
  }
  return 0;
}
