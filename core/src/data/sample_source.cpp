#include <axon/data/sample_source.hpp>

namespace axon::data {

const char* pixel_format_name(PixelFormat f) {
  switch (f) {
    case PixelFormat::kUint8: return "uint8";
    case PixelFormat::kFloat255: return "float32 (0 to 255)";
    case PixelFormat::kFloat32: return "float32";
  }
  return "?";
}

std::string shape_text(const SampleLayout& l) {
  return std::to_string(l.rows) + "x" + std::to_string(l.cols) + "x" + std::to_string(l.channels);
}

}  // namespace axon::data
