// An MNIST-format data set in a folder: train-images-idx3-ubyte[.gz],
// train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz],
// t10k-labels-idx1-ubyte[.gz] (Fashion-MNIST, MNIST, KMNIST all use these
// names). Images stay uint8 on the host; batches are converted on the device.
#pragma once

#include <axon/data/sample_source.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace axon::data {

// One split in memory: `count` images of rows x cols x channels (NHWC) in
// `format` (uint8 from IDX files and uint8 arrays, float32 from float arrays)
// and their labels.
struct ImageSet : SampleSource {
  int64_t count = 0, rows = 0, cols = 0, channels = 1;
  PixelFormat format = PixelFormat::kUint8;
  std::vector<uint8_t> images;  // count * image_bytes()
  std::vector<uint8_t> labels;  // count, each < num_classes
  int64_t image_bytes() const { return layout().bytes(); }

  int64_t size() const override { return count; }
  SampleLayout layout() const override { return {rows, cols, channels, format}; }
  int32_t label(int64_t i) const override { return labels[static_cast<size_t>(i)]; }
  void read(int64_t i, uint8_t* dst) const override;
  // Keeps the first n samples (n >= count is a no-op); frees the rest.
  void truncate(int64_t n) override;
};

struct ImageDataset {
  ImageSet train, test;
  std::filesystem::path folder;
};

// The debian package that ships the default data set.
inline constexpr const char* kDefaultDataDir = "/usr/share/datasets/fashion-mnist";
inline constexpr const char* kDefaultDataPackage = "dataset-fashion-mnist";

// Finds `stem` or `stem.gz` in `folder` (a regular file preferred, raw
// before gzip); empty path when neither name exists. Something that is not a
// regular file is returned too, so that reading it says what it is.
std::filesystem::path find_idx_file(const std::filesystem::path& folder, const std::string& stem);

// Loads one split ("train" or "t10k"). Labels are read and range-checked
// (< num_classes) and the image header is matched against them (same count)
// before the image buffer is allocated.
ImageSet load_split(const std::filesystem::path& folder, const std::string& split, int num_classes = 10);

// Loads both splits. A missing folder or file is a UsageError naming the
// folder, the files expected and the package that provides them.
ImageDataset load_image_dataset(const std::filesystem::path& folder, int num_classes = 10);

}  // namespace axon::data
