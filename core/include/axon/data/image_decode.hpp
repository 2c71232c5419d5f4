// Image files decoded as tf.io.decode_image(contents, channels=C,
// expand_animations=False) decodes them for Keras' image_dataset_from_directory:
// the format found by its first bytes (not the name), 8 bits per channel.
//   - PNG (libpng): TensorFlow's transforms (16 bits stripped to 8, palettes
//     and low bit depths expanded, tRNS to alpha, alpha added or stripped,
//     gray to RGB, RGB to gray with weights 0.299, 0.587).
//   - JPEG (libjpeg-turbo's TurboJPEG): the integer fast DCT and fancy
//     upsampling, as decode_image uses; gray is libjpeg's luma. A truncated
//     or corrupt file is refused (decode_image refuses them too): every
//     warning of libjpeg but the one about extraneous bytes between segments.
//   - BMP: uncompressed 8, 24 or 32 bits per pixel, bottom-up or top-down,
//     read as TensorFlow reads them (8 bits: the index as gray).
//   - GIF (giflib): the first frame on the logical screen, RGB, transparent
//     and uncovered pixels 0.
// Channel counts TensorFlow refuses for a format (GIF as gray, JPEG as RGBA,
// BMP as gray) are converted here instead: gray = (299 R + 587 G + 114 B) /
// 1000 rounded, alpha 255 where there was none.
// Limits (limits.hpp) are checked from the header before the pixels are
// allocated; a truncated, corrupt or oversized file is a UsageError naming it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace axon::data {

enum class ImageFormat { kUnknown, kPng, kJpeg, kBmp, kGif };

struct DecodedImage {
  int64_t rows = 0, cols = 0, channels = 0;
  std::vector<uint8_t> pixels;  // rows * cols * channels, HWC
};

// What a file's first bytes say: its format, size and whether it is gray.
struct ImageHeader {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t rows = 0, cols = 0;
  bool gray = false;  // a grayscale PNG (with or without alpha), JPEG or 8-bit BMP
};

// Reads the header from the start of a file (`prefix`: its first bytes, 64
// KiB is plenty but for JPEGs with large metadata). False when the size is
// not within the prefix; UsageError naming `name` when the file is no image
// axon reads or its size is beyond the limits.
bool read_image_header(std::span<const uint8_t> prefix, const std::string& name, ImageHeader& h);

// By the first bytes, as decode_image does.
ImageFormat sniff_image(std::span<const uint8_t> bytes);
const char* image_format_name(ImageFormat f);

// Decodes to `channels` (1, 3 or 4) 8-bit channels.
DecodedImage decode_image(std::span<const uint8_t> bytes, int channels, const std::string& name);

}  // namespace axon::data
