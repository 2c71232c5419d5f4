// What the API tests share: a runtime of the build tree's plugins (CPU and
// the reference device), started before the API would start its own from
// the environment, and an empty scratch folder.
#pragma once

#include "runtime_fixture.hpp"

#include <axon/axon.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace axon::test {

inline Runtime& start_runtime() { return Runtime::init(test_config()); }

// An empty folder of the system's temporary directory, one per test process.
inline std::filesystem::path temp_dir(const char* name) {
  const auto dir =
      std::filesystem::temp_directory_path() / (std::string("axon-api-") + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace axon::test
