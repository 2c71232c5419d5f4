// The two kinds of failure a user sees: bad usage or input (exit code 2) and
// a runtime failure (exit code 1). Apps catch these at main() and print the
// message once.
#pragma once

#include <stdexcept>
#include <string>

namespace axon {

// Bad flags, bad environment values, unknown device names, corrupt input files.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Anything that went wrong while running: a plugin error, out of memory, a
// collective timeout.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace axon
