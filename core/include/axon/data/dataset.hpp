// What --data (and --validation-data) name, decided by what is there:
//   - a folder of IDX files (train-/t10k-{images-idx3,labels-idx1}-ubyte[.gz]):
//     the train files for training, the t10k files for validation;
//   - a .npz in Keras' mnist.npz layout (x_train, y_train, x_test, y_test):
//     the test pair for validation;
//   - IMAGES.npy,LABELS.npy: one split from two .npy files;
//   - a folder of class folders of images (Keras' image_dataset_from_directory
//     layout), split by validation_split when asked;
// (arrays.hpp, mnist.hpp, image_folder.hpp say what each accepts). A
// --validation-data source replaces the data's own validation split: an IDX
// folder gives its t10k files, a .npz its test pair (or its training pair
// when it has none), an image folder all its images (its classes must be
// the training folder's).
#pragma once

#include <axon/data/sample_source.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::data {

struct DataOptions {
  std::string data;                            // --data
  std::optional<std::string> validation_data;  // --validation-data
  // Image folders only (UsageError with other data):
  int64_t image_rows = 0, image_cols = 0;  // --image-size: every image resized to it
  int channels = 0;                        // --color-mode: 1, 3, 4 (0: the model's, else the first image's)
  double validation_split = 0;             // --validation-split
  bool cache = false;                      // --cache
  // The model's input [H, W, C] (--model), which image folders must fit
  // unless resized; empty for the built-in CNN, which fits the data.
  std::vector<int64_t> model_input;
  uint64_t seed = 0;      // the validation split's shuffle
  bool progress = false;  // a count and rate on a terminal while image files are checked or large arrays read
};

// The largest label of a split and where it is, for "label 12 ... is outside
// the model's 10 classes".
struct LabelExtent {
  int32_t max = -1;
  int64_t index = 0;   // its sample
  std::string where;   // the labels' file ("y.npz: y_train.npy")
};

struct Dataset {
  std::unique_ptr<SampleSource> train, validation;  // validation may be null
  std::string kind;  // "IDX", "npz", "npy", "image folder": how --data was read
  std::string path;                                 // --data as given
  std::string validation_path;                      // --validation-data, when given
  std::string train_labels_file, validation_labels_file;  // where the labels came from, for messages
  std::vector<std::string> class_names;  // image folders: the class of each label; else empty
  LabelExtent train_labels() const;
  LabelExtent validation_labels() const;  // max -1 without validation data
  // The classes: the class folders', else the largest label + 1.
  int classes_needed() const;
};

// Loads what the options name. UsageError (naming the file and the fault)
// for anything missing, malformed or beyond a limit, before allocating for it.
Dataset load_dataset(const DataOptions& options);

// Class names as the JSON array kept in weights files and checkpoints
// (metadata key "class_names"), and back; UsageError naming `what` for text
// that is not an array of strings.
std::string class_names_json(const std::vector<std::string>& names);
std::vector<std::string> class_names_from_json(const std::string& json, const std::string& what);

// The largest label of a source.
LabelExtent label_extent(const SampleSource& s, std::string where);

}  // namespace axon::data
