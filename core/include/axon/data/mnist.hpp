// An MNIST-format data set in a folder: train-images-idx3-ubyte[.gz],
// train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz],
// t10k-labels-idx1-ubyte[.gz] (Fashion-MNIST, MNIST, KMNIST all use these
// names). Images stay uint8 on the host; batches are converted on the device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace axon::data {

// One split: `count` images of rows x cols x 1 (NHWC, one channel) and labels.
struct ImageSet {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> images;  // count * rows * cols
  std::vector<uint8_t> labels;  // count, each < num_classes
  int64_t image_bytes() const { return rows * cols; }
  // Keeps the first n samples (n >= count is a no-op); frees the rest.
  void truncate(int64_t n);
};

struct ImageDataset {
  ImageSet train, test;
  std::filesystem::path folder;
};

// The debian package that ships the default data set.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kDefaultDataPackage = "dataset-fashion-mnist";

// Finds `stem` or `stem.gz` in `folder` (raw preferred when both exist);
// empty path when neither exists.
std::filesystem::path find_idx_file(const std::filesystem::path& folder, const std::string& stem);

// Loads one split ("train" or "t10k"). Labels are read and range-checked
// (< num_classes) and the image header is matched against them (same count)
// before the image buffer is allocated.
ImageSet load_split(const std::filesystem::path& folder, const std::string& split, int num_classes = 10);

// Loads both splits. A missing folder or file is a UsageError naming the
// folder, the files expected and the package that provides them.
ImageDataset load_image_dataset(const std::filesystem::path& folder, int num_classes = 10);

}  // namespace axon::data
