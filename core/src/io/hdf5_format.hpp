// What HDF5's reader and writer share of the on-disk format (the HDF5 File
// Format Specification, version 2.0).
#pragma once

#include <cstdint>

namespace axon::io {

// The "undefined address" (all bits set) of an absent object or message.
inline constexpr uint64_t kHdf5UndefinedAddress = ~uint64_t{0};

}  // namespace axon::io
