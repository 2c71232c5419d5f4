// Where a model's samples come from: images (NHWC, one sample at a time) and
// their class labels. An ImageSet holds them in memory (IDX files, NumPy
// arrays); an image folder decodes each file when it is read. The batch
// pipeline reads samples through this interface only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace axon::data {

// How a sample's pixels are stored and what the model gets of them.
enum class PixelFormat {
  kUint8,     // 0..255 bytes: divided by 255 on the device, unless the model rescales them itself (Rescaling)
  kFloat255,  // float32 on the 0..255 scale (a resized image): the same rule as kUint8
  kFloat32,   // float32 already scaled (NumPy float arrays): given to the model as they are
};

// Bytes of one element of the format.
inline int64_t pixel_bytes(PixelFormat f) { return f == PixelFormat::kUint8 ? 1 : 4; }
const char* pixel_format_name(PixelFormat f);

// The per-sample shape [rows, cols, channels] and the pixels' format.
struct SampleLayout {
  int64_t rows = 0, cols = 0, channels = 1;
  PixelFormat format = PixelFormat::kUint8;
  int64_t values() const { return rows * cols * channels; }
  int64_t bytes() const { return values() * pixel_bytes(format); }
  std::vector<int64_t> shape() const { return {rows, cols, channels}; }
  bool operator==(const SampleLayout&) const = default;
};

// "28x28x1"
std::string shape_text(const SampleLayout& l);

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  virtual int64_t size() const = 0;  // samples
  virtual SampleLayout layout() const = 0;
  // Sample i's class, 0 <= label < the model's classes (checked at load).
  virtual int32_t label(int64_t i) const = 0;
  // Writes sample i's layout().bytes() into dst. Safe to call from several
  // threads at once for different samples. A file that cannot be read or
  // decoded is a UsageError naming it.
  virtual void read(int64_t i, uint8_t* dst) const = 0;
  // How many threads the batch pipeline should read samples with: 1 for
  // copies from memory, more where each read decodes a file.
  virtual int reader_threads() const { return 1; }
  // Keeps the first n samples (n >= size() is a no-op).
  virtual void truncate(int64_t n) = 0;
};

}  // namespace axon::data
