// A folder of images sorted by class, as Keras'
// image_dataset_from_directory(labels="inferred") reads it: one subfolder per
// class (their names sorted, those starting with '.' left out; a link to a
// folder counts), the class's files found in it and the folders below it
// (links to folders not followed), by extension: .png, .jpg, .jpeg, .bmp,
// .gif in any case; anything else ignored. Files are listed in Keras' order
// (by folder path, then name), and with a validation split shuffled by
// NumPy's RandomState(seed) and cut as Keras cuts them: the last
// int(split * N) files validate.
//
// Before any training every file is opened and its header read: what is
// not a regular file (a FIFO, a link loop), not an image, beyond the pixel
// limit, or (without resizing) not of the expected size is refused then,
// naming it. Pixels are decoded when a batch needs them (image_decode.hpp),
// on the batch pipeline's threads; with `cache` each decoded image is kept
// after its first use (tf.data's cache()).
#pragma once

#include <axon/data/sample_source.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace axon::data {

struct ImageFolderOptions {
  // The images' size: with `resize`, every image is resized to it
  // (TensorFlow's bilinear resize, float pixels); without, every image must
  // have it (uint8 pixels). 0 x 0 without resize: the first image's size.
  int64_t rows = 0, cols = 0;
  bool resize = false;
  bool resize_if_needed = false;  // resize only when some image is not rows x cols
  int channels = 0;  // 1, 3 or 4; 0: 1 when the first image is gray, else 3
  double validation_split = 0;  // 0: no split
  uint32_t seed = 0;            // the split's shuffle
  bool cache = false;
  int threads = 0;  // decoding threads (0: one a core)
  // The class names the folder must have (a validation folder's must be the
  // training folder's); empty: whatever it has.
  std::vector<std::string> expect_classes;
  bool progress = false;  // a count and rate on stderr while files are checked
};

struct ImageFolder {
  std::vector<std::string> class_names;
  std::unique_ptr<SampleSource> train, validation;  // validation: with a split only
  int64_t files = 0;  // images found
};

ImageFolder load_image_folder(const std::filesystem::path& root, const ImageFolderOptions& options);

// Whether a folder is laid out as class subfolders (any subfolder at all).
bool has_subfolders(const std::filesystem::path& root);
// Whether a file name has an image extension Keras lists (.png, .jpg, .jpeg, .bmp, .gif, any case).
bool has_image_extension(const std::string& name);

// The image files of a folder tree or the one file named, for axon-predict:
// sorted as above, every file checked as above.
std::unique_ptr<SampleSource> image_files(const std::vector<std::filesystem::path>& files,
                                          const ImageFolderOptions& options);

// The files a sample source of images reads, or nullptr for other sources.
const std::vector<std::string>* image_paths(const SampleSource& s);

}  // namespace axon::data
