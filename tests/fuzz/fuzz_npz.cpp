// The .npz front end on arbitrary bytes: libzip's reading of the archive
// behind axon's checks (members, methods, sizes, bombs), then the Keras
// layout and its arrays. It returns the data set or throws UsageError, and
// never allocates beyond what the archive can really hold.
#include "check_message.hpp"
#include "fuzz_input_file.hpp"

#include <axon/data/arrays.hpp>
#include <axon/data/zip_archive.hpp>
#include <axon/error.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const axon::fuzz::InputFile file(data, size);
  try {
    // Every member read to its end, whatever it holds.
    axon::data::ZipArchive zip(file.path());
    for (const axon::data::ZipArchive::Member& m : zip.members()) {
      try {
        std::unique_ptr<axon::data::ByteStream> in = zip.open(m);
        unsigned char buf[4096];
        uint64_t total = 0;
        while (size_t n = in->read_some(buf, sizeof buf)) total += n;
        if (total > m.size) std::abort();  // never past the declared size
      } catch (const axon::UsageError& e) {
        axon::fuzz::check_message(e);
      }
    }
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  try {
    const axon::data::ArrayDataset ds = axon::data::load_npz(file.path());
    if (static_cast<int64_t>(ds.train.images.size()) != ds.train.count * ds.train.image_bytes()) std::abort();
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  return 0;
}
