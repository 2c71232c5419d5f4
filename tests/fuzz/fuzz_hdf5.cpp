// The HDF5 reader (a .keras file's model.weights.h5) on arbitrary bytes: it
// parses the whole tree and reads every dataset, or throws UsageError, and
// never reads, allocates or recurses beyond what the input holds.
#include "check_message.hpp"

#include <axon/error.hpp>
#include <axon/io/hdf5.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const axon::io::Hdf5File f(std::span<const uint8_t>(data, size), "fuzz.h5");
    for (const axon::io::Hdf5Dataset& d : f.datasets()) {
      if (d.offset > size || d.elements() * static_cast<uint64_t>(d.element_bytes) > size - d.offset)
        std::abort();  // a dataset's data lies within the input
      (void)f.floats(d);
    }
  } catch (const axon::UsageError& e) {
    axon::fuzz::check_message(e);
  }
  return 0;
}
