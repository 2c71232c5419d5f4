// Images and labels from .npy streams (files, or members of a .npz). The
// order of work follows the "check before allocating" rule: both headers,
// their shapes and lengths, then the labels (small) and their values, then
// the images, converted piece by piece into the set's own buffer.
#include <axon/data/arrays.hpp>
#include <axon/data/npy.hpp>
#include <axon/data/zip_archive.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>

#include "load_progress.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>

namespace axon::data {
namespace {

std::string shape_of(const NpyHeader& h) {
  std::string s = "(";
  for (size_t i = 0; i < h.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(h.shape[i]);
  return s + (h.shape.size() == 1 ? ",)" : ")");
}

// Element i of a piece, as an unsigned integer of its width, in host order.
uint64_t raw_element(const uint8_t* p, int bytes, bool big_endian) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) {
    const int shift = 8 * (big_endian ? bytes - 1 - b : b);
    v |= uint64_t{p[b]} << shift;
  }
  return v;
}

void check_images_header(const NpyHeader& h, const std::string& what) {
  if (h.shape.size() != 3 && h.shape.size() != 4)
    throw UsageError(what + ": images must be N x H x W or N x H x W x C, got the shape " + shape_of(h));
  const bool u8 = h.kind == 'u' && h.item_bytes == 1;
  const bool fl = h.kind == 'f' && (h.item_bytes == 4 || h.item_bytes == 8);
  if (!u8 && !fl)
    throw UsageError(what + ": images of dtype " + h.dtype_name() +
                     " are not read; axon reads uint8 (0 to 255) and float32 or float64 (already scaled) images");
  for (size_t i = 1; i < h.shape.size(); ++i)
    if (h.shape[i] == 0) throw UsageError(what + ": images of the shape " + shape_of(h) + " have no pixels");
  if (h.shape.size() == 4 && h.shape[3] > 4)
    throw UsageError(what + ": images of " + std::to_string(h.shape[3]) +
                     " channels (the shape " + shape_of(h) + "); axon reads 1 to 4 channels, channels last");
  if (h.shape[1] > limits::kMaxModelImageSide || h.shape[2] > limits::kMaxModelImageSide)
    throw UsageError(what + ": images of " + std::to_string(h.shape[1]) + "x" + std::to_string(h.shape[2]) +
                     " are above the limit of " + std::to_string(limits::kMaxModelImageSide) + " pixels a side");
}

void check_labels_header(const NpyHeader& h, const std::string& what) {
  if (!(h.shape.size() == 1 || (h.shape.size() == 2 && h.shape[1] == 1)))
    throw UsageError(what + ": labels must be N or N x 1 class indices, got the shape " + shape_of(h));
  if (h.kind != 'u' && h.kind != 'i')
    throw UsageError(what + ": labels of dtype " + h.dtype_name() + "; labels must be integers (class indices)");
}

// Labels as uint8 class indices; UsageError naming the first out of range.
std::vector<uint8_t> read_labels(ByteStream& in, const NpyHeader& h) {
  std::vector<uint8_t> labels;
  labels.reserve(static_cast<size_t>(h.elements()));
  read_npy_data(in, h, [&](const uint8_t* p, size_t n) {
    for (size_t off = 0; off < n; off += static_cast<size_t>(h.item_bytes)) {
      uint64_t v = raw_element(p + off, h.item_bytes, h.big_endian);
      int64_t value = static_cast<int64_t>(v);
      if (h.kind == 'i' && h.item_bytes < 8 && (v >> (8 * h.item_bytes - 1)) != 0)
        value = static_cast<int64_t>(v | (~uint64_t{0} << (8 * h.item_bytes)));  // sign-extend
      if (h.kind == 'u' && h.item_bytes == 8 && v > uint64_t{INT64_MAX}) value = -1;
      if (value < 0 || value > 255)
        throw UsageError(in.name() + ": label " + (h.kind == 'u' && value < 0 ? std::to_string(v) : std::to_string(value)) +
                         " at index " + std::to_string(labels.size()) +
                         (value < 0 ? " is negative; labels are class indices from 0"
                                    : " is above 255; axon reads at most 256 classes from arrays"));
      labels.push_back(static_cast<uint8_t>(value));
    }
  });
  return labels;
}

// NumPy's order of dimensions reversed (Fortran) to C order, elements of `size` bytes.
std::vector<uint8_t> c_order(const std::vector<uint8_t>& f, const std::vector<int64_t>& shape, size_t size) {
  std::vector<uint8_t> c(f.size());
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0), stride(rank, 1);  // Fortran strides in elements
  for (size_t d = 1; d < rank; ++d) stride[d] = stride[d - 1] * shape[d - 1];
  const size_t total = f.size() / size;
  for (size_t i = 0; i < total; ++i) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += index[d] * stride[d];
    std::memcpy(c.data() + i * size, f.data() + static_cast<size_t>(src) * size, size);
    for (size_t d = rank; d-- > 0;) {  // C order: the last index moves fastest
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return c;
}

// Images of kProgressBytes or more show progress (when asked for, on a terminal).
constexpr uint64_t kProgressBytes = uint64_t{64} << 20;

void read_images(ByteStream& in, const NpyHeader& h, ImageSet& set, bool progress) {
  set.count = h.shape[0];
  set.rows = h.shape[1];
  set.cols = h.shape[2];
  set.channels = h.shape.size() == 4 ? h.shape[3] : 1;
  set.format = h.kind == 'u' ? PixelFormat::kUint8 : PixelFormat::kFloat32;
  const size_t out_size = static_cast<size_t>(pixel_bytes(set.format));
  set.images.resize(static_cast<size_t>(h.elements()) * out_size);
  size_t at = 0;  // elements written
  LoadProgress shown(progress && h.data_bytes() >= kProgressBytes, "Reading " + in.name(),
                     static_cast<double>(h.data_bytes()), 1e6, " MB", "MB");
  double read = 0;
  read_npy_data(in, h, [&](const uint8_t* p, size_t n) {
    read += static_cast<double>(n);
    shown.tick(read);
    if (set.format == PixelFormat::kUint8) {
      std::memcpy(set.images.data() + at, p, n);
      at += n;
      return;
    }
    for (size_t off = 0; off < n; off += static_cast<size_t>(h.item_bytes), ++at) {
      const uint64_t bits = raw_element(p + off, h.item_bytes, h.big_endian);
      const float v = h.item_bytes == 4 ? std::bit_cast<float>(static_cast<uint32_t>(bits))
                                        : static_cast<float>(std::bit_cast<double>(bits));
      std::memcpy(set.images.data() + at * 4, &v, 4);
    }
  });
  if (h.fortran_order) set.images = c_order(set.images, h.shape, out_size);
  if (set.format == PixelFormat::kUint8) return;
  const int64_t per = set.rows * set.cols * set.channels;
  for (int64_t i = 0; i < set.count * per; ++i) {
    float v;
    std::memcpy(&v, set.images.data() + i * 4, 4);
    if (!std::isfinite(v)) {
      const int64_t pixel = (i % per) / set.channels;
      throw UsageError(in.name() + ": image " + std::to_string(i / per) + " has a value that is not finite" +
                       (h.item_bytes == 8 ? " as float32" : "") + " at row " + std::to_string(pixel / set.cols) +
                       ", column " + std::to_string(pixel % set.cols));
    }
  }
}

// Reads a split from two streams whose headers were read already.
ImageSet read_split(ByteStream& x, const NpyHeader& xh, ByteStream& y, const NpyHeader& yh, bool progress) {
  check_images_header(xh, x.name());
  check_labels_header(yh, y.name());
  if (xh.shape[0] != yh.shape[0])
    throw UsageError(x.name() + " holds " + std::to_string(xh.shape[0]) + " images but " + y.name() + " holds " +
                     std::to_string(yh.shape[0]) + " labels");
  if (xh.shape[0] == 0) throw UsageError(x.name() + ": holds no images");
  ImageSet set;
  set.labels = read_labels(y, yh);
  read_images(x, xh, set, progress);
  return set;
}

ImageSet images_only(ByteStream& x, const NpyHeader& xh) {
  check_images_header(xh, x.name());
  ImageSet set;
  read_images(x, xh, set, false);
  set.labels.assign(static_cast<size_t>(set.count), 0);
  return set;
}

}  // namespace

ImageSet load_npy_images(const std::filesystem::path& images) {
  FileStream x(images);
  const NpyHeader xh = read_npy_header(x, limits::kMaxArrayDataBytes);
  if (x.file_size() != xh.header_bytes + xh.data_bytes())
    throw UsageError(x.name() + ": the .npy header promises " + std::to_string(xh.data_bytes()) +
                     " data bytes but the file has " +
                     std::to_string(x.file_size() > xh.header_bytes ? x.file_size() - xh.header_bytes : 0));
  return images_only(x, xh);
}

ImageSet load_npz_images(const std::filesystem::path& file) {
  ZipArchive zip(file);
  const ZipArchive::Member* m = zip.find("x_test.npy");
  if (m == nullptr) m = zip.find("x_train.npy");
  if (m == nullptr) throw UsageError(file.string() + ": a .npz in Keras' layout holds x_test.npy or x_train.npy");
  std::unique_ptr<ByteStream> x = zip.open(*m);
  const NpyHeader xh = read_npy_header(*x, limits::kMaxArrayDataBytes);
  if (m->size != xh.header_bytes + xh.data_bytes())
    throw UsageError(x->name() + ": the .npy header promises " + std::to_string(xh.header_bytes + xh.data_bytes()) +
                     " bytes but the zip entry declares " + std::to_string(m->size));
  return images_only(*x, xh);
}

bool looks_like_zip(const std::filesystem::path& file) {
  try {
    FileStream in(file);
    char magic[4] = {};
    return in.read_some(magic, 4) >= 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
  } catch (const UsageError&) {
    return false;
  }
}

bool looks_like_npy(const std::filesystem::path& file) {
  try {
    FileStream in(file);
    char magic[6] = {};
    size_t got = 0;
    while (got < 6) {
      const size_t r = in.read_some(magic + got, 6 - got);
      if (r == 0) break;
      got += r;
    }
    return got == 6 && std::memcmp(magic, "\x93NUMPY", 6) == 0;
  } catch (const UsageError&) {
    return false;
  }
}

ArrayDataset load_npz(const std::filesystem::path& file, bool progress) {
  ZipArchive zip(file);
  auto member = [&](const char* key) { return zip.find(std::string(key) + ".npy"); };
  if (member("x_train") == nullptr || member("y_train") == nullptr) {
    std::string names;
    for (const ZipArchive::Member& m : zip.members()) names += (names.empty() ? "" : ", ") + m.name;
    throw UsageError(file.string() + ": a .npz in Keras' layout holds x_train.npy and y_train.npy (and x_test.npy, "
                     "y_test.npy); this one holds " + (names.empty() ? std::string("nothing") : names));
  }
  if ((member("x_test") == nullptr) != (member("y_test") == nullptr))
    throw UsageError(file.string() + ": holds " + (member("x_test") ? "x_test" : "y_test") + " without " +
                     (member("x_test") ? "y_test" : "x_test"));
  ArrayDataset ds;
  auto split = [&](const char* x_key, const char* y_key) {
    std::unique_ptr<ByteStream> x = zip.open(*member(x_key));
    std::unique_ptr<ByteStream> y = zip.open(*member(y_key));
    const NpyHeader xh = read_npy_header(*x, limits::kMaxArrayDataBytes);
    const NpyHeader yh = read_npy_header(*y, limits::kMaxArrayDataBytes);
    // The entry's declared size must be what the header promises.
    for (auto [s, h, key] : {std::tuple{x.get(), &xh, x_key}, std::tuple{y.get(), &yh, y_key}}) {
      const uint64_t declared = member(key)->size;
      if (declared != h->header_bytes + h->data_bytes())
        throw UsageError(s->name() + ": the .npy header promises " + std::to_string(h->header_bytes + h->data_bytes()) +
                         " bytes but the zip entry declares " + std::to_string(declared));
    }
    return read_split(*x, xh, *y, yh, progress);
  };
  ds.train = split("x_train", "y_train");
  if (member("x_test") != nullptr) {
    ds.test = split("x_test", "y_test");
    ds.has_test = true;
  }
  return ds;
}

ImageSet load_npy_pair(const std::filesystem::path& images, const std::filesystem::path& labels, bool progress) {
  FileStream x(images), y(labels);
  const NpyHeader xh = read_npy_header(x, limits::kMaxArrayDataBytes);
  const NpyHeader yh = read_npy_header(y, limits::kMaxArrayDataBytes);
  for (auto [s, h] : {std::pair{&x, &xh}, std::pair{&y, &yh}})
    if (s->file_size() != h->header_bytes + h->data_bytes())
      throw UsageError(s->name() + ": the .npy header promises " + std::to_string(h->data_bytes()) +
                       " data bytes but the file has " +
                       std::to_string(s->file_size() > h->header_bytes ? s->file_size() - h->header_bytes : 0));
  return read_split(x, xh, y, yh, progress);
}

}  // namespace axon::data
