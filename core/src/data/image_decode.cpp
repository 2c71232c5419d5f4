// The four decoders behind decode_image. Each checks the header's size
// against limits::kMaxImagePixels before it allocates the pixels, and turns
// every failure of its library into one UsageError naming the file.
#include <axon/data/image_decode.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <gif_lib.h>
#include <png.h>
#include <turbojpeg.h>

#include <csetjmp>
#include <cstring>
#include <memory>

namespace axon::data {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& why) { throw UsageError(name + ": " + why); }

void check_size(const std::string& name, const char* format, int64_t rows, int64_t cols) {
  if (rows <= 0 || cols <= 0)
    bad(name, std::string(format) + " header gives the image " + std::to_string(cols) + " x " + std::to_string(rows) +
                  " pixels");
  if (rows > limits::kMaxImagePixels || cols > limits::kMaxImagePixels || rows * cols > limits::kMaxImagePixels)
    bad(name, std::string(format) + " header claims " + std::to_string(cols) + " x " + std::to_string(rows) +
                  " pixels, more than the limit of " + std::to_string(limits::kMaxImagePixels) + " pixels an image");
}

// Channels from `from` (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) to `to` (1, 3, 4).
DecodedImage convert(DecodedImage in, int to) {
  if (in.channels == to) return in;
  DecodedImage out;
  out.rows = in.rows;
  out.cols = in.cols;
  out.channels = to;
  const size_t n = static_cast<size_t>(in.rows * in.cols);
  out.pixels.resize(n * static_cast<size_t>(to));
  const auto from = static_cast<size_t>(in.channels);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = in.pixels.data() + i * from;
    uint8_t* q = out.pixels.data() + i * static_cast<size_t>(to);
    const bool color = from >= 3;
    const uint8_t r = p[0], g = color ? p[1] : p[0], b = color ? p[2] : p[0];
    const uint8_t a = from == 2 ? p[1] : from == 4 ? p[3] : 255;
    if (to == 1) {
      q[0] = color ? static_cast<uint8_t>((299 * r + 587 * g + 114 * b + 500) / 1000) : r;
    } else {
      q[0] = r;
      q[1] = g;
      q[2] = b;
      if (to == 4) q[3] = a;
    }
  }
  return out;
}

// ---- PNG: libpng with TensorFlow's transforms (png_io.cc) ----

struct PngInput {
  const uint8_t* data;
  size_t left;
  char message[200];
};

void png_error_fn(png_structp png, png_const_charp msg) {
  auto* in = static_cast<PngInput*>(png_get_error_ptr(png));
  std::snprintf(in->message, sizeof in->message, "%s", msg);
  png_longjmp(png, 1);
}

void png_warning_fn(png_structp, png_const_charp) {}  // as TensorFlow: warnings are not failures

void png_read_fn(png_structp png, png_bytep out, png_size_t n) {
  auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
  if (n > in->left) png_error(png, "the file ends inside the image data (truncated)");
  std::memcpy(out, in->data, n);
  in->data += n;
  in->left -= n;
}

// The setjmp frame holds no C++ object: `out` and `in` live in the caller.
bool decode_png_into(PngInput& in, int channels, DecodedImage& out, std::string& limit_error, const std::string& name) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &in, png_error_fn, png_warning_fn);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  png_set_user_limits(png, static_cast<png_uint_32>(limits::kMaxImagePixels),
                      static_cast<png_uint_32>(limits::kMaxImagePixels));
  png_set_read_fn(png, &in, png_read_fn);
  png_read_info(png, info);
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0;
  png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, nullptr, nullptr, nullptr);
  try {
    check_size(name, "PNG", height, width);
  } catch (const UsageError& e) {
    limit_error = e.what();
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  const bool has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
  const bool has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if (channels == 4) {
    if (!has_alpha) {
      if (has_trns) png_set_tRNS_to_alpha(png);
      else png_set_add_alpha(png, (1u << bit_depth) - 1, PNG_FILLER_AFTER);
    }
  } else if (has_alpha || has_trns) {
    png_set_strip_alpha(png);
  }
  if (bit_depth > 8) png_set_strip_16(png);
  png_set_packing(png);
  const int passes = png_set_interlace_handling(png);
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  const bool is_gray = (color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (channels < 3) {
    if (!is_gray) png_set_rgb_to_gray(png, 1, 0.299, 0.587);
  } else if (is_gray) {
    png_set_gray_to_rgb(png);
  }
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != static_cast<size_t>(width) * static_cast<size_t>(channels))
    png_error(png, "unexpected row size after conversion");
  out.rows = height;
  out.cols = width;
  out.channels = channels;
  out.pixels.resize(static_cast<size_t>(width) * height * static_cast<size_t>(channels));
  const size_t row_bytes = static_cast<size_t>(width) * static_cast<size_t>(channels);
  for (int p = 0; p < passes; ++p)
    for (png_uint_32 r = 0; r < height; ++r) png_read_row(png, out.pixels.data() + r * row_bytes, nullptr);
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return true;
}

DecodedImage decode_png(std::span<const uint8_t> bytes, int channels, const std::string& name) {
  PngInput in{bytes.data(), bytes.size(), {}};
  DecodedImage out;
  std::string limit_error;
  if (!decode_png_into(in, channels, out, limit_error, name)) {
    if (!limit_error.empty()) throw UsageError(limit_error);
    bad(name, std::string("corrupt PNG: ") + (in.message[0] ? in.message : "libpng could not start"));
  }
  return out;
}

// ---- JPEG: TurboJPEG ----

// The frame header's kind: progressive JPEGs keep every coefficient in memory
// (2 bytes a pixel and component), counted against the limit too.
bool jpeg_progressive(std::span<const uint8_t> b) {
  size_t i = 2;
  while (i + 4 <= b.size()) {
    if (b[i] != 0xFF) return false;
    const uint8_t marker = b[i + 1];
    if (marker == 0xFF) {
      ++i;
      continue;
    }
    if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
      return marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE;
    i += 2 + ((size_t{b[i + 2]} << 8) | b[i + 3]);
  }
  return false;
}

DecodedImage decode_jpeg(std::span<const uint8_t> bytes, int channels, const std::string& name) {
  std::unique_ptr<void, int (*)(tjhandle)> tj(tjInitDecompress(), tjDestroy);
  if (!tj) throw RuntimeError(name + ": cannot start the JPEG decoder");
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(tj.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), &width, &height, &subsamp,
                          &colorspace) != 0)
    bad(name, std::string("corrupt JPEG: ") + tjGetErrorStr2(tj.get()));
  check_size(name, "JPEG", height, width);
  const int components = colorspace == TJCS_GRAY ? 1 : colorspace == TJCS_CMYK || colorspace == TJCS_YCCK ? 4 : 3;
  if (jpeg_progressive(bytes) &&
      int64_t{width} * height * (2 * components + channels) > 4 * limits::kMaxImagePixels)
    bad(name, "progressive JPEG of " + std::to_string(width) + " x " + std::to_string(height) +
                  " pixels needs more memory to decode than the limit allows");
  if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK)
    bad(name, "CMYK JPEG: axon decodes grayscale and color (YCbCr, RGB) JPEGs");
  DecodedImage out;
  out.rows = height;
  out.cols = width;
  out.channels = channels;
  out.pixels.resize(static_cast<size_t>(width) * static_cast<size_t>(height) * static_cast<size_t>(channels));
  const int format = channels == 1 ? TJPF_GRAY : channels == 3 ? TJPF_RGB : TJPF_RGBA;
  if (tjDecompress2(tj.get(), bytes.data(), static_cast<unsigned long>(bytes.size()), out.pixels.data(), width, 0, height,
                    format, TJFLAG_FASTDCT | TJFLAG_LIMITSCANS) != 0) {
    const std::string why = tjGetErrorStr2(tj.get());
    // libjpeg goes on after a warning with made-up data (TensorFlow refuses
    // such files too); only extraneous bytes between segments are harmless.
    if (tjGetErrorCode(tj.get()) != TJERR_WARNING || why.find("extraneous bytes") == std::string::npos)
      bad(name, "corrupt JPEG: " + why + (why.find("Premature end") != std::string::npos ? " (truncated)" : ""));
  }
  return out;
}

// ---- BMP: as TensorFlow's decode_bmp ----

uint32_t le32(const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24; }

DecodedImage decode_bmp(std::span<const uint8_t> b, int channels, const std::string& name) {
  if (b.size() < 34) bad(name, "truncated BMP: " + std::to_string(b.size()) + " bytes, less than its headers");
  const uint32_t offset = le32(&b[10]);
  const auto width = static_cast<int32_t>(le32(&b[18]));
  const auto height = static_cast<int32_t>(le32(&b[22]));
  const int bpp = b[28] | b[29] << 8;
  const uint32_t compression = le32(&b[30]);
  if (bpp != 8 && bpp != 24 && bpp != 32)
    bad(name, "BMP of " + std::to_string(bpp) + " bits per pixel; axon reads 8, 24 and 32 (as TensorFlow)");
  if (compression != 0 && !(compression == 3 && bpp == 32))
    bad(name, "compressed BMP (method " + std::to_string(compression) + "); axon reads uncompressed BMPs");
  if (height == INT32_MIN) bad(name, "BMP header gives a height of -2^31");
  const int64_t rows = height < 0 ? -int64_t{height} : height;
  check_size(name, "BMP", rows, width);
  const int src = bpp / 8;
  const int64_t row_size = (src * int64_t{width} + 3) / 4 * 4;
  if (offset > b.size() || b.size() - offset < static_cast<uint64_t>(row_size * rows))
    bad(name, "truncated BMP: its pixels need " + std::to_string(row_size * rows) + " bytes after offset " +
                  std::to_string(offset) + ", the file has " + std::to_string(b.size() > offset ? b.size() - offset : 0));
  DecodedImage img;
  img.rows = rows;
  img.cols = width;
  img.channels = src == 1 ? 1 : src;
  img.pixels.resize(static_cast<size_t>(rows * width * src));
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* in = b.data() + offset + (height < 0 ? r : rows - 1 - r) * row_size;
    uint8_t* out = img.pixels.data() + r * width * src;
    for (int64_t c = 0; c < width; ++c, in += src, out += src) {
      if (src == 1) {
        out[0] = in[0];
      } else {  // BGR(A) to RGB(A)
        out[0] = in[2];
        out[1] = in[1];
        out[2] = in[0];
        if (src == 4) out[3] = in[3];
      }
    }
  }
  return convert(std::move(img), channels);
}

// ---- GIF: giflib, the first frame ----

struct GifInput {
  const uint8_t* data;
  size_t left;
};

// giflib's text for an error code; it has none for some codes (nullptr).
std::string gif_error(int code) {
  const char* text = GifErrorString(code);
  return text != nullptr ? text : "giflib error " + std::to_string(code);
}

int gif_read(GifFileType* gif, GifByteType* out, int n) {
  auto* in = static_cast<GifInput*>(gif->UserData);
  const size_t take = std::min(in->left, static_cast<size_t>(n < 0 ? 0 : n));
  std::memcpy(out, in->data, take);
  in->data += take;
  in->left -= take;
  return static_cast<int>(take);
}

DecodedImage decode_gif(std::span<const uint8_t> bytes, int channels, const std::string& name) {
  GifInput in{bytes.data(), bytes.size()};
  int err = 0;
  auto close = [](GifFileType* g) {
    int e = 0;
    DGifCloseFile(g, &e);
  };
  std::unique_ptr<GifFileType, decltype(close)> gif(DGifOpen(&in, gif_read, &err), close);
  if (!gif) bad(name, "corrupt GIF: " + gif_error(err));
  auto fail = [&](const char* what) { bad(name, std::string("corrupt GIF: ") + what + ": " + gif_error(gif->Error)); };
  check_size(name, "GIF", gif->SHeight, gif->SWidth);
  int transparent = NO_TRANSPARENT_COLOR;
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(gif.get(), &type) == GIF_ERROR) fail("reading a record");
    if (type == TERMINATE_RECORD_TYPE) bad(name, "GIF without an image");
    if (type == EXTENSION_RECORD_TYPE) {
      int code = 0;
      GifByteType* ext = nullptr;
      if (DGifGetExtension(gif.get(), &code, &ext) == GIF_ERROR) fail("reading an extension");
      if (code == GRAPHICS_EXT_FUNC_CODE && ext != nullptr) {
        GraphicsControlBlock gcb;
        if (DGifExtensionToGCB(ext[0], ext + 1, &gcb) == GIF_OK) transparent = gcb.TransparentColor;
      }
      while (ext != nullptr)
        if (DGifGetExtensionNext(gif.get(), &ext) == GIF_ERROR) fail("reading an extension");
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) continue;
    if (DGifGetImageDesc(gif.get()) == GIF_ERROR) fail("reading the image descriptor");
    const GifImageDesc& d = gif->Image;
    if (d.Left < 0 || d.Top < 0 || d.Width <= 0 || d.Height <= 0 || d.Left + d.Width > gif->SWidth ||
        d.Top + d.Height > gif->SHeight)
      bad(name, "corrupt GIF: the first frame lies outside the image");
    const ColorMapObject* map = d.ColorMap != nullptr ? d.ColorMap : gif->SColorMap;
    if (map == nullptr) bad(name, "corrupt GIF: no color map");
    DecodedImage img;
    img.rows = gif->SHeight;
    img.cols = gif->SWidth;
    img.channels = 3;
    img.pixels.assign(static_cast<size_t>(img.rows * img.cols * 3), 0);
    std::vector<GifPixelType> line(static_cast<size_t>(d.Width));
    // Interlaced frames arrive in four passes of rows.
    static constexpr int kStart[] = {0, 4, 2, 1}, kStep[] = {8, 8, 4, 2};
    const int passes = d.Interlace ? 4 : 1;
    for (int p = 0; p < passes; ++p)
      for (int r = d.Interlace ? kStart[p] : 0; r < d.Height; r += d.Interlace ? kStep[p] : 1) {
        if (DGifGetLine(gif.get(), line.data(), d.Width) == GIF_ERROR) fail("reading the pixels");
        uint8_t* out = img.pixels.data() + (static_cast<size_t>(d.Top + r) * img.cols + d.Left) * 3;
        for (int c = 0; c < d.Width; ++c, out += 3) {
          const int index = line[static_cast<size_t>(c)];
          if (index == transparent) continue;
          if (index >= map->ColorCount) bad(name, "corrupt GIF: a color index outside the color map");
          out[0] = map->Colors[index].Red;
          out[1] = map->Colors[index].Green;
          out[2] = map->Colors[index].Blue;
        }
      }
    return convert(std::move(img), channels);
  }
}

}  // namespace

bool read_image_header(std::span<const uint8_t> b, const std::string& name, ImageHeader& h) {
  h = ImageHeader{};
  h.format = sniff_image(b);
  auto be16 = [&](size_t i) { return int64_t{b[i]} << 8 | b[i + 1]; };
  auto le16 = [&](size_t i) { return int64_t{b[i]} | int64_t{b[i + 1]} << 8; };
  switch (h.format) {
    case ImageFormat::kPng:
      if (b.size() < 26 || std::memcmp(&b[12], "IHDR", 4) != 0) bad(name, "corrupt PNG: no IHDR chunk first");
      h.cols = be16(16) << 16 | be16(18);
      h.rows = be16(20) << 16 | be16(22);
      h.gray = (b[25] & PNG_COLOR_MASK_COLOR) == 0;
      break;
    case ImageFormat::kJpeg: {
      // The segments up to the frame header (SOFn), whose lengths are given.
      size_t i = 2;
      for (;;) {
        if (i + 10 > b.size()) return false;
        if (b[i] != 0xFF) bad(name, "corrupt JPEG: no marker where one should be");
        const uint8_t m = b[i + 1];
        if (m == 0xFF) {
          ++i;
          continue;
        }
        if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
          h.rows = be16(i + 5);
          h.cols = be16(i + 7);
          h.gray = b[i + 9] == 1;
          break;
        }
        if (m == 0xD9 || m == 0xDA) bad(name, "corrupt JPEG: no frame header before its data");
        i += 2 + static_cast<size_t>(be16(i + 2));
      }
      break;
    }
    case ImageFormat::kGif:
      if (b.size() < 10) bad(name, "truncated GIF: " + std::to_string(b.size()) + " bytes");
      h.cols = le16(6);
      h.rows = le16(8);
      break;
    case ImageFormat::kBmp: {
      if (b.size() < 30) bad(name, "truncated BMP: " + std::to_string(b.size()) + " bytes");
      const auto height = static_cast<int32_t>(le32(&b[22]));
      h.cols = static_cast<int32_t>(le32(&b[18]));
      h.rows = height == INT32_MIN ? 0 : height < 0 ? -int64_t{height} : height;
      h.gray = (b[28] | b[29] << 8) == 8;
      break;
    }
    case ImageFormat::kUnknown:
      bad(name, b.empty() ? "empty file, not an image"
                          : "not a PNG, JPEG, BMP or GIF image (its first bytes are none of theirs)");
  }
  check_size(name, image_format_name(h.format), h.rows, h.cols);
  return true;
}

ImageFormat sniff_image(std::span<const uint8_t> b) {
  auto starts = [&](const char* magic, size_t n) { return b.size() >= n && std::memcmp(b.data(), magic, n) == 0; };
  if (starts("\xff\xd8\xff", 3)) return ImageFormat::kJpeg;
  if (starts("\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (starts("GIF8", 4)) return ImageFormat::kGif;
  if (starts("BM", 2)) return ImageFormat::kBmp;
  return ImageFormat::kUnknown;
}

const char* image_format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::kPng: return "PNG";
    case ImageFormat::kJpeg: return "JPEG";
    case ImageFormat::kBmp: return "BMP";
    case ImageFormat::kGif: return "GIF";
    case ImageFormat::kUnknown: break;
  }
  return "unknown";
}

DecodedImage decode_image(std::span<const uint8_t> bytes, int channels, const std::string& name) {
  if (channels != 1 && channels != 3 && channels != 4)
    throw UsageError(name + ": images are decoded to 1, 3 or 4 channels, not " + std::to_string(channels));
  // The header's size against the limits first, whatever the decoder would do.
  ImageHeader h;
  const bool known = read_image_header(bytes, name, h);
  DecodedImage img;
  switch (h.format) {
    case ImageFormat::kPng: img = decode_png(bytes, channels, name); break;
    case ImageFormat::kJpeg: img = decode_jpeg(bytes, channels, name); break;
    case ImageFormat::kBmp: img = decode_bmp(bytes, channels, name); break;
    case ImageFormat::kGif: img = decode_gif(bytes, channels, name); break;
    case ImageFormat::kUnknown: break;
  }
  if (known && (img.rows != h.rows || img.cols != h.cols))
    bad(name, std::string("corrupt ") + image_format_name(h.format) + ": its header gives " + std::to_string(h.cols) +
                  " x " + std::to_string(h.rows) + " pixels, its data " + std::to_string(img.cols) + " x " +
                  std::to_string(img.rows));
  return img;
}

}  // namespace axon::data
