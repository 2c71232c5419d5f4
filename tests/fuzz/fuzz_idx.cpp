// The IDX reader (raw and gzip, one member or several) on arbitrary bytes:
// it returns the array or throws UsageError, and never reads, allocates or
// runs away beyond what the input holds.
#include "fuzz_input_file.hpp"

#include <axon/data/idx.hpp>
#include <axon/error.hpp>

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const axon::fuzz::InputFile file(data, size);
  for (int rank : {1, 3}) {
    try {
      const axon::data::IdxArray a = axon::data::read_idx(file.path(), rank);
      uint64_t n = 1;
      for (int64_t d : a.dims) n *= static_cast<uint64_t>(d);
      if (n != a.data.size()) std::abort();  // the header's promise, kept
    } catch (const axon::UsageError&) {
    }
  }
  return 0;
}
