// The two kinds of failure a user sees: bad usage or input (exit code 2) and
// a runtime failure (exit code 1). Apps catch these at main() and print the
// message once.
#pragma once

#include <stdexcept>
#include <string>

namespace axon {

// Bad flags, bad environment values, unknown device names, corrupt input files.
// Its message is made one printable line (parse::one_line): it is what the
// app prints as its one error line, and it may quote what a file or a flag
// held (a name with a line break in it, bytes that are not UTF-8).
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message);
  explicit UsageError(const char* message);
};

// Anything that went wrong while running: a plugin error, out of memory, a
// collective timeout.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace axon
