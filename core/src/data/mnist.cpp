// Loads an MNIST-format folder. Order matters for the "check before
// allocating" rule: both headers are validated, then the (small) labels are
// read and range-checked, and only then is the image buffer allocated.
#include <axon/data/idx.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>

#include <cstring>
#include <string>
#include <system_error>

namespace axon::data {
namespace {

const char* const kSplits[] = {"train", "t10k"};

std::string stem(const std::string& split, bool images) {
  return split + (images ? "-images-idx3-ubyte" : "-labels-idx1-ubyte");
}

std::string expected_files() {
  std::string s;
  for (const char* split : kSplits)
    for (bool images : {true, false}) {
      if (!s.empty()) s += ", ";
      s += stem(split, images) + "[.gz]";
    }
  return s;
}

[[noreturn]] void missing(const std::string& what) {
  throw UsageError(what + "; an MNIST-format data folder holds " + expected_files() +
                   " (the default data set comes from the Debian package " + kDefaultDataPackage +
                   ": apt-get install " + kDefaultDataPackage + ", which installs it in " + kDefaultDataDir +
                   "; or pass --data DIR)");
}

std::filesystem::path require_file(const std::filesystem::path& folder, const std::string& name) {
  std::filesystem::path p = find_idx_file(folder, name);
  if (p.empty()) missing("data folder " + folder.string() + " has no " + name + " or " + name + ".gz");
  return p;
}

}  // namespace

void ImageSet::read(int64_t i, uint8_t* dst) const {
  const auto bytes = static_cast<size_t>(image_bytes());
  std::memcpy(dst, images.data() + static_cast<size_t>(i) * bytes, bytes);
}

void ImageSet::truncate(int64_t n) {
  if (n < 0 || n >= count) return;
  count = n;
  images.resize(static_cast<size_t>(n * image_bytes()));
  images.shrink_to_fit();
  labels.resize(static_cast<size_t>(n));
  labels.shrink_to_fit();
}

std::filesystem::path find_idx_file(const std::filesystem::path& folder, const std::string& name) {
  // Anything by that name (a FIFO, a folder, a link loop) is found, so that
  // reading it says what it is rather than that it is missing; a regular
  // file is preferred when both names exist.
  std::error_code ec;
  std::filesystem::path found;
  for (const std::string& candidate : {name, name + ".gz"}) {
    std::filesystem::path p = folder / candidate;
    if (std::filesystem::is_regular_file(p, ec)) return p;
    if (found.empty() && std::filesystem::symlink_status(p, ec).type() != std::filesystem::file_type::not_found)
      found = p;
  }
  return found;
}

ImageSet load_split(const std::filesystem::path& folder, const std::string& split, int num_classes) {
  std::filesystem::path images_file = require_file(folder, stem(split, true));
  std::filesystem::path labels_file = require_file(folder, stem(split, false));

  IdxHeader ih = read_idx_header(images_file, 3);
  if (ih.dims[1] > limits::kMaxImageSide || ih.dims[2] > limits::kMaxImageSide)
    throw UsageError(images_file.string() + ": images of " + std::to_string(ih.dims[1]) + "x" +
                     std::to_string(ih.dims[2]) + " pixels are above the limit of " +
                     std::to_string(limits::kMaxImageSide) + "x" + std::to_string(limits::kMaxImageSide));
  IdxHeader lh = read_idx_header(labels_file, 1);
  if (ih.dims[0] != lh.dims[0])
    throw UsageError(images_file.string() + ": holds " + std::to_string(ih.dims[0]) + " images but " +
                     labels_file.string() + " holds " + std::to_string(lh.dims[0]) + " labels");

  IdxArray labels = read_idx(labels_file, 1);
  for (size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= num_classes)
      throw UsageError(labels_file.string() + ": label " + std::to_string(labels.data[i]) + " at index " +
                       std::to_string(i) + " is outside 0.." + std::to_string(num_classes - 1));

  IdxArray images = read_idx(images_file, 3);
  ImageSet set;
  set.count = images.dims[0];
  set.rows = images.dims[1];
  set.cols = images.dims[2];
  set.images = std::move(images.data);
  set.labels = std::move(labels.data);
  return set;
}

ImageDataset load_image_dataset(const std::filesystem::path& folder, int num_classes) {
  std::error_code ec;
  if (!std::filesystem::exists(folder, ec)) missing("data folder " + folder.string() + " does not exist");
  if (!std::filesystem::is_directory(folder, ec)) missing("data path " + folder.string() + " is not a folder");
  ImageDataset ds;
  ds.folder = folder;
  // Check every file is there before reading any, so the message lists what is missing at once.
  std::string absent;
  for (const char* split : kSplits)
    for (bool images : {true, false})
      if (find_idx_file(folder, stem(split, images)).empty())
        absent += (absent.empty() ? "" : ", ") + stem(split, images) + "[.gz]";
  if (!absent.empty()) missing("data folder " + folder.string() + " lacks " + absent);
  ds.train = load_split(folder, "train", num_classes);
  ds.test = load_split(folder, "t10k", num_classes);
  if (ds.train.rows != ds.test.rows || ds.train.cols != ds.test.cols)
    throw UsageError("data folder " + folder.string() + ": training images are " + std::to_string(ds.train.rows) +
                     "x" + std::to_string(ds.train.cols) + " but test images are " + std::to_string(ds.test.rows) +
                     "x" + std::to_string(ds.test.cols));
  return ds;
}

}  // namespace axon::data
