// Helpers shared by the training tests: temporary folders, IDX writers, the
// usage-error catcher, and the process-wide runtime restricted to the CPU and
// reference devices.
#pragma once

#include <axon/error.hpp>
#include <axon/runtime.hpp>

#include <catch2/catch.hpp>

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace axon::test {

// A fresh folder under the system temp dir, removed on destruction.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("axon-train-test-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
};

inline std::string idx_bytes(uint8_t type, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& payload) {
  std::string s;
  s += '\0';
  s += '\0';
  s += static_cast<char>(type);
  s += static_cast<char>(dims.size());
  for (uint32_t d : dims) {
    s += static_cast<char>(d >> 24);
    s += static_cast<char>(d >> 16);
    s += static_cast<char>(d >> 8);
    s += static_cast<char>(d);
  }
  s.append(payload.begin(), payload.end());
  return s;
}

inline void write_raw(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

inline void write_gz(const std::filesystem::path& p, const std::string& bytes) {
  gzFile f = gzopen(p.c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("cannot write " + p.string());
  if (!bytes.empty()) gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A small valid data set: n images of r x c with pixel = (i * 7 + k) % 256
// and label = i % 10, for both splits.
inline void write_dataset(const std::filesystem::path& dir, uint32_t n_train, uint32_t n_test, bool gzip,
                          uint32_t rows = 28, uint32_t cols = 28) {
  for (auto [split, n] : {std::pair<const char*, uint32_t>{"train", n_train}, {"t10k", n_test}}) {
    std::vector<uint8_t> px(size_t{n} * rows * cols), lb(n);
    for (size_t i = 0; i < n; ++i) {
      lb[i] = static_cast<uint8_t>(i % 10);
      for (size_t k = 0; k < size_t{rows} * cols; ++k) px[i * rows * cols + k] = static_cast<uint8_t>((i * 7 + k) % 256);
    }
    const std::string ext = gzip ? ".gz" : "";
    auto w = gzip ? write_gz : write_raw;
    w(dir / (std::string(split) + "-images-idx3-ubyte" + ext), idx_bytes(0x08, {n, rows, cols}, px));
    w(dir / (std::string(split) + "-labels-idx1-ubyte" + ext), idx_bytes(0x08, {n}, lb));
  }
}

// Runs f, which must throw UsageError (or a subclass); returns its message.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("expected UsageError, got another exception: " << e.what());
  }
  FAIL("expected UsageError, nothing was thrown");
  return {};
}

// The runtime for tests: the build tree's plugins (CPU and reference).
inline Runtime& test_runtime() {
  if (!Runtime::initialised()) {
    Config c = Config::from_environment();
    c.visible_devices.reset();
    Runtime::init(c);
  }
  return Runtime::get();
}

// Its first CPU device.
inline Device& test_cpu() {
  Device* d = test_runtime().find_device("cpu:0");
  REQUIRE(d != nullptr);
  return *d;
}

}  // namespace axon::test
