// Indexing as Keras does (image_folder.hpp), a header check of every file,
// then ImageFiles: a SampleSource that reads, decodes and (when asked)
// resizes one file per sample, keeping the result with --cache.
#include <axon/data/byte_stream.hpp>
#include <axon/data/image_decode.hpp>
#include <axon/data/image_folder.hpp>
#include <axon/data/numpy_random.hpp>
#include <axon/data/resize.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/parse.hpp>

#include "load_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace axon::data {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad_folder(const fs::path& p, const std::string& why) {
  throw UsageError(parse::printable_path(p) + ": " + why);
}

std::vector<fs::directory_entry> entries(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::directory_entry> out;
  fs::directory_iterator it(dir, ec);
  if (ec) bad_folder(dir, "cannot list the folder: " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) bad_folder(dir, "cannot list the folder: " + ec.message());
    out.push_back(*it);
  }
  if (ec) bad_folder(dir, "cannot list the folder: " + ec.message());
  return out;
}

// os.walk(dir) without following links to folders: (folder, its file names).
void walk(const fs::path& dir, std::vector<std::pair<std::string, std::vector<std::string>>>& out, int depth) {
  if (depth > 64) bad_folder(dir, "folders nested more than 64 deep");
  std::vector<std::string> files;
  std::vector<fs::path> subfolders;
  for (const fs::directory_entry& e : entries(dir)) {
    std::error_code ec;
    const fs::file_status own = e.symlink_status(ec);
    if (fs::is_directory(own)) {
      subfolders.push_back(e.path());
    } else if (fs::is_symlink(own) && fs::is_directory(e.path(), ec)) {
      continue;  // a link to a folder: listed by os.walk as a folder, not followed
    } else {
      files.push_back(e.path().filename().string());
    }
  }
  out.emplace_back(dir.string(), std::move(files));
  for (const fs::path& sub : subfolders) walk(sub, out, depth + 1);
}

// The image files of one class folder, in Keras' order.
std::vector<std::string> class_files(const fs::path& dir) {
  std::vector<std::pair<std::string, std::vector<std::string>>> tree;
  walk(dir, tree, 0);
  std::sort(tree.begin(), tree.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& [folder, names] : tree) {
    std::sort(names.begin(), names.end());
    for (const std::string& n : names)
      if (has_image_extension(n)) out.push_back((fs::path(folder) / n).string());
  }
  return out;
}

std::vector<std::string> class_folders(const fs::path& root) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : entries(root)) {
    const std::string name = e.path().filename().string();
    std::error_code ec;
    if (name.empty() || name[0] == '.' || !fs::is_directory(e.path(), ec)) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + parse::printable(n);
  return s;
}

// The header of one file (the whole file when its JPEG metadata is long).
ImageHeader header_of(const std::string& path) {
  FileStream in{fs::path(path)};
  if (in.file_size() > limits::kMaxImageFileBytes)
    throw UsageError(parse::printable(path) + ": the file is " + std::to_string(in.file_size()) +
                     " bytes, more than the limit of " + std::to_string(limits::kMaxImageFileBytes) + " for an image");
  std::vector<uint8_t> prefix(static_cast<size_t>(std::min<uint64_t>(in.file_size(), 64 * 1024)));
  in.read_exactly(prefix.data(), prefix.size(), "image header");
  ImageHeader h;
  if (read_image_header(prefix, parse::printable(path), h)) return h;
  std::vector<uint8_t> whole(static_cast<size_t>(in.file_size()));
  std::memcpy(whole.data(), prefix.data(), prefix.size());
  in.read_exactly(whole.data() + prefix.size(), whole.size() - prefix.size(), "image");
  if (!read_image_header(whole, parse::printable(path), h))
    throw UsageError(parse::printable(path) + ": corrupt JPEG: no frame header (truncated?)");
  return h;
}

class ImageFiles : public SampleSource {
 public:
  // Float pixels: every image resized to the layout's size; uint8: each must have it.
  ImageFiles(std::vector<std::string> paths, std::vector<int32_t> labels, SampleLayout layout, bool cache, int threads)
      : paths_(std::move(paths)), labels_(std::move(labels)), layout_(layout),
        resize_(layout.format == PixelFormat::kFloat255), cache_(cache), threads_(threads) {}

  int64_t size() const override { return static_cast<int64_t>(paths_.size()); }
  SampleLayout layout() const override { return layout_; }
  int32_t label(int64_t i) const override { return labels_[static_cast<size_t>(i)]; }
  int reader_threads() const override { return threads_; }
  void truncate(int64_t n) override {
    if (n < 0 || n >= size()) return;
    paths_.resize(static_cast<size_t>(n));
    labels_.resize(static_cast<size_t>(n));
  }
  const std::vector<std::string>& paths() const { return paths_; }

  void read(int64_t i, uint8_t* dst) const override {
    const auto bytes = static_cast<size_t>(layout_.bytes());
    if (cache_) {
      std::call_once(cache_once_, [&] {
        cache_data_.reset(new uint8_t[bytes * paths_.size()]);
        cached_.reset(new std::atomic<bool>[paths_.size()]);
        for (size_t k = 0; k < paths_.size(); ++k) cached_[k].store(false, std::memory_order_relaxed);
      });
      if (cached_[static_cast<size_t>(i)].load(std::memory_order_acquire)) {
        std::memcpy(dst, cache_data_.get() + static_cast<size_t>(i) * bytes, bytes);
        return;
      }
    }
    decode_into(paths_[static_cast<size_t>(i)], dst);
    if (cache_) {
      std::memcpy(cache_data_.get() + static_cast<size_t>(i) * bytes, dst, bytes);
      cached_[static_cast<size_t>(i)].store(true, std::memory_order_release);
    }
  }

 private:
  void decode_into(const std::string& path, uint8_t* dst) const {
    const std::string name = parse::printable(path);
    FileStream in{fs::path(path)};
    if (in.file_size() > limits::kMaxImageFileBytes)
      throw UsageError(name + ": the file is " + std::to_string(in.file_size()) + " bytes, more than the limit of " +
                       std::to_string(limits::kMaxImageFileBytes) + " for an image");
    std::vector<uint8_t> bytes(static_cast<size_t>(in.file_size()));
    in.read_exactly(bytes.data(), bytes.size(), "image");
    const DecodedImage img = decode_image(bytes, static_cast<int>(layout_.channels), name);
    if (resize_) {
      resize_bilinear(img.pixels, img.rows, img.cols, img.channels, reinterpret_cast<float*>(dst), layout_.rows,
                      layout_.cols);
      return;
    }
    if (img.rows != layout_.rows || img.cols != layout_.cols)
      throw UsageError(name + ": the image is " + std::to_string(img.cols) + "x" + std::to_string(img.rows) +
                       " pixels now, not " + std::to_string(layout_.cols) + "x" + std::to_string(layout_.rows));
    std::memcpy(dst, img.pixels.data(), img.pixels.size());
  }

  std::vector<std::string> paths_;
  std::vector<int32_t> labels_;
  SampleLayout layout_;
  bool resize_, cache_;
  int threads_;
  mutable std::once_flag cache_once_;
  mutable std::unique_ptr<uint8_t[]> cache_data_;
  mutable std::unique_ptr<std::atomic<bool>[]> cached_;
};

// Every file's header: kinds, limits, sizes; the layout from the options and
// the first file.
SampleLayout check_files(const std::vector<std::string>& paths, const ImageFolderOptions& o) {
  SampleLayout l;
  l.rows = o.rows;
  l.cols = o.cols;
  l.channels = o.channels;
  l.format = o.resize ? PixelFormat::kFloat255 : PixelFormat::kUint8;
  LoadProgress progress(o.progress, "Checking images", static_cast<double>(paths.size()), 1, "", "files");
  const bool from_first = l.rows == 0;
  bool all_fit = true;
  for (size_t i = 0; i < paths.size(); ++i) {
    const ImageHeader h = header_of(paths[i]);
    if (i == 0) {
      if (from_first) {
        l.rows = h.rows;
        l.cols = h.cols;
      }
      if (l.channels == 0) l.channels = h.gray ? 1 : 3;
    }
    all_fit = all_fit && h.rows == l.rows && h.cols == l.cols;
    if (!o.resize && !o.resize_if_needed && (h.rows != l.rows || h.cols != l.cols))
      throw UsageError(parse::printable(paths[i]) + ": the image is " + std::to_string(h.cols) + "x" +
                       std::to_string(h.rows) + " pixels but the images must be " + std::to_string(l.cols) + "x" +
                       std::to_string(l.rows) + (from_first ? " (the size of the first, " + parse::printable(paths[0]) + ")"
                                                            : " (the model's input)") +
                       "; --image-size H,W resizes them as Keras does");
    progress.tick(static_cast<double>(i + 1));
  }
  if (o.resize_if_needed && !all_fit) l.format = PixelFormat::kFloat255;
  if (l.rows > limits::kMaxModelImageSide || l.cols > limits::kMaxModelImageSide)
    throw UsageError("images of " + std::to_string(l.cols) + "x" + std::to_string(l.rows) +
                     " pixels are above the limit of " + std::to_string(limits::kMaxModelImageSide) + " a side");
  return l;
}

// --cache keeps every decoded image: it must fit in memory, with room to spare.
void check_cache(const ImageFolderOptions& o, const SampleLayout& l, size_t files) {
  if (!o.cache) return;
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const double memory = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
  const double need = static_cast<double>(l.bytes()) * static_cast<double>(files);
  if (memory > 0 && need > memory / 2) {
    char text[160];
    std::snprintf(text, sizeof text, "--cache would keep %.1f GB of decoded images, more than half of this machine's "
                  "%.1f GB; without --cache they stream", need / 1e9, memory / 1e9);
    throw UsageError(text);
  }
}

int threads_for(const ImageFolderOptions& o) {
  return o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

bool has_subfolders(const fs::path& root) { return !class_folders(root).empty(); }

bool has_image_extension(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* ext : {".bmp", ".gif", ".jpeg", ".jpg", ".png"}) {
    const size_t n = std::strlen(ext);
    if (lower.size() >= n && lower.compare(lower.size() - n, n, ext) == 0) return true;
  }
  return false;
}


ImageFolder load_image_folder(const fs::path& root, const ImageFolderOptions& o) {
  ImageFolder out;
  out.class_names = class_folders(root);
  if (!o.expect_classes.empty() && out.class_names != o.expect_classes)
    bad_folder(root, "its classes (" + joined(out.class_names) + ") are not the training data's (" +
                         joined(o.expect_classes) + ")");
  if (out.class_names.size() < 2)
    bad_folder(root, out.class_names.empty()
                         ? std::string("no class folders: an image folder holds one subfolder of images per class")
                         : "only one class folder (" + joined(out.class_names) +
                               "); an image folder holds one subfolder per class, at least two");
  std::vector<std::string> paths;
  std::vector<int32_t> labels;
  for (size_t c = 0; c < out.class_names.size(); ++c) {
    const std::vector<std::string> files = class_files(root / out.class_names[c]);
    if (files.empty())
      bad_folder(root / out.class_names[c], "class folder without images (.png, .jpg, .jpeg, .bmp or .gif)");
    paths.insert(paths.end(), files.begin(), files.end());
    labels.insert(labels.end(), files.size(), static_cast<int32_t>(c));
  }
  out.files = static_cast<int64_t>(paths.size());
  const SampleLayout layout = check_files(paths, o);
  check_cache(o, layout, paths.size());
  if (o.validation_split > 0) {
    const auto n = static_cast<int64_t>(paths.size());
    const auto n_val = static_cast<int64_t>(o.validation_split * static_cast<double>(n));
    if (n_val == 0 || n_val == n)
      bad_folder(root, "--validation-split " + std::to_string(o.validation_split) + " of " + std::to_string(n) +
                           " files leaves " + (n_val == 0 ? "no file to validate" : "no file to train"));
    // Keras shuffles both lists with the same seed: one permutation.
    NumpyRandomState(o.seed).shuffle(paths);
    NumpyRandomState(o.seed).shuffle(labels);
    std::vector<std::string> val_paths(paths.end() - n_val, paths.end());
    std::vector<int32_t> val_labels(labels.end() - n_val, labels.end());
    paths.resize(static_cast<size_t>(n - n_val));
    labels.resize(static_cast<size_t>(n - n_val));
    out.validation = std::make_unique<ImageFiles>(std::move(val_paths), std::move(val_labels), layout, o.cache,
                                                  threads_for(o));
  }
  out.train = std::make_unique<ImageFiles>(std::move(paths), std::move(labels), layout, o.cache, threads_for(o));
  return out;
}

std::unique_ptr<SampleSource> image_files(const std::vector<fs::path>& files, const ImageFolderOptions& o) {
  std::vector<std::string> paths;
  for (const fs::path& f : files) {
    std::error_code ec;
    if (fs::is_directory(f, ec)) {
      const std::vector<std::string> inside = class_files(f);
      paths.insert(paths.end(), inside.begin(), inside.end());
    } else {
      paths.push_back(f.string());
    }
  }
  if (paths.empty()) throw UsageError("no image files (.png, .jpg, .jpeg, .bmp or .gif) among the inputs");
  const SampleLayout layout = check_files(paths, o);
  check_cache(o, layout, paths.size());
  std::vector<int32_t> labels(paths.size(), 0);
  return std::make_unique<ImageFiles>(std::move(paths), std::move(labels), layout, o.cache, threads_for(o));
}

const std::vector<std::string>* image_paths(const SampleSource& s) {
  const auto* f = dynamic_cast<const ImageFiles*>(&s);
  return f != nullptr ? &f->paths() : nullptr;
}

}  // namespace axon::data
