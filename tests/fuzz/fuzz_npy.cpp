// The .npy reader on arbitrary bytes: the header parser alone, then an
// images file and a labels file read as a pair (shapes, dtypes, byte orders,
// Fortran order, conversions, lengths). The input is a 2-byte little-endian
// length, that many bytes of the images file, then the labels file
// (make_array_seeds.py writes seeds so). It returns the split or throws
// UsageError, and never reads, allocates or runs away beyond the input.
#include "check_message.hpp"
#include "fuzz_input_file.hpp"

#include <axon/data/arrays.hpp>
#include <axon/data/npy.hpp>
#include <axon/error.hpp>

#include <algorithm>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const axon::data::NpyHeader h =
        axon::data::parse_npy_header(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", 1u << 26);
    if (h.header_bytes > size || h.item_bytes <= 0) std::abort();
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  if (size < 2) return 0;
  const size_t split = std::min<size_t>(size - 2, data[0] | size_t{data[1]} << 8);
  const axon::fuzz::InputFile images(data + 2, split), labels(data + 2 + split, size - 2 - split);
  try {
    const axon::data::ImageSet s = axon::data::load_npy_pair(images.path(), labels.path());
    if (static_cast<int64_t>(s.images.size()) != s.count * s.image_bytes() ||
        static_cast<int64_t>(s.labels.size()) != s.count)
      std::abort();  // the set holds what its header promised
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  return 0;
}
