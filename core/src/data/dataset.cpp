// --data decides by what it finds: a folder of IDX files, a .npz, a pair of
// .npy files; each becomes in-memory ImageSets behind the SampleSource
// interface.
#include <axon/data/arrays.hpp>
#include <axon/data/byte_stream.hpp>
#include <axon/data/dataset.hpp>
#include <axon/data/image_folder.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <system_error>

namespace axon::data {
namespace {

namespace fs = std::filesystem;

bool is_idx_folder(const fs::path& folder) {
  for (const char* stem : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"})
    if (!find_idx_file(folder, stem).empty()) return true;
  return false;
}

// "a.npy,b.npy" when the whole string names nothing and both halves do.
std::optional<std::pair<fs::path, fs::path>> npy_pair(const std::string& spec) {
  const size_t comma = spec.find(',');
  if (comma == std::string::npos || spec.find(',', comma + 1) != std::string::npos) return std::nullopt;
  std::error_code ec;
  if (fs::symlink_status(spec, ec).type() != fs::file_type::not_found) return std::nullopt;
  return std::pair{fs::path(spec.substr(0, comma)), fs::path(spec.substr(comma + 1))};
}

std::unique_ptr<SampleSource> owned(ImageSet s) { return std::make_unique<ImageSet>(std::move(s)); }

struct Loaded {
  std::unique_ptr<SampleSource> train, validation;
  std::string kind;
  std::string train_labels_file, validation_labels_file;
  std::vector<std::string> class_names;
};

// `train`: the training data's layout and classes when loading validation data.
Loaded load_one(const std::string& spec, const char* flag, const DataOptions& o, const Dataset* train) {
  Loaded out;
  if (auto pair = npy_pair(spec)) {
    for (const fs::path& p : {pair->first, pair->second}) {
      const std::string what = not_a_regular_file(p);
      if (!what.empty())
        throw UsageError(std::string(flag) + " " + parse::printable(spec) + ": " + parse::printable_path(p) + " " + what +
                         " (IMAGES.npy,LABELS.npy names two .npy files)");
    }
    out.train = owned(load_npy_pair(pair->first, pair->second, o.progress));
    out.kind = "npy";
    out.train_labels_file = pair->second.string();
    return out;
  }
  const fs::path path(spec);
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) {
    if (is_idx_folder(path)) {
      ImageDataset ds = load_image_dataset(path);
      out.train = owned(std::move(ds.train));
      out.validation = owned(std::move(ds.test));
      out.kind = "IDX";
      out.train_labels_file = find_idx_file(path, "train-labels-idx1-ubyte").string();
      out.validation_labels_file = find_idx_file(path, "t10k-labels-idx1-ubyte").string();
      return out;
    }
    if (has_subfolders(path)) {
      ImageFolderOptions f;
      f.resize = o.image_rows > 0;
      f.rows = f.resize ? o.image_rows : o.model_input.empty() ? 0 : o.model_input[0];
      f.cols = f.resize ? o.image_cols : o.model_input.empty() ? 0 : o.model_input[1];
      f.channels = o.channels > 0 ? o.channels : o.model_input.empty() ? 0 : static_cast<int>(o.model_input[2]);
      if (train != nullptr) {
        f.rows = train->train->layout().rows;
        f.cols = train->train->layout().cols;
        f.channels = static_cast<int>(train->train->layout().channels);
        f.expect_classes = train->class_names;
      }
      f.validation_split = train == nullptr ? o.validation_split : 0;
      if (o.seed > UINT32_MAX && f.validation_split > 0)
        throw UsageError("--validation-split shuffles with NumPy's RandomState(seed), whose seed is below 2^32; --seed " +
                         std::to_string(o.seed) + " is not");
      f.seed = static_cast<uint32_t>(o.seed);
      f.cache = o.cache;
      f.progress = o.progress;
      ImageFolder folder = load_image_folder(path, f);
      out.train = std::move(folder.train);
      out.validation = std::move(folder.validation);
      out.class_names = std::move(folder.class_names);
      out.kind = "image folder";
      out.train_labels_file = out.validation_labels_file = spec;
      return out;
    }
    for (const fs::directory_entry& e : fs::directory_iterator(path, ec))
      if (has_image_extension(e.path().filename().string()))
        throw UsageError(std::string(flag) + " " + parse::printable_path(path) +
                         " holds images but no class folders: an image folder holds one subfolder of images per class "
                         "(as Keras' image_dataset_from_directory reads it)");
    // Neither: the IDX loader's message names the files and the package.
    load_image_dataset(path);
  }
  if (fs::is_regular_file(st)) {
    if (looks_like_zip(path)) {
      ArrayDataset ds = load_npz(path, o.progress);
      out.train = owned(std::move(ds.train));
      out.train_labels_file = spec + ": y_train.npy";
      if (ds.has_test) {
        out.validation = owned(std::move(ds.test));
        out.validation_labels_file = spec + ": y_test.npy";
      }
      out.kind = "npz";
      return out;
    }
    if (looks_like_npy(path))
      throw UsageError(std::string(flag) + " " + parse::printable(spec) +
                       " is one .npy file; name the images and the labels: " + flag + " IMAGES.npy,LABELS.npy");
    throw UsageError(std::string(flag) + " " + parse::printable(spec) +
                     " is neither a .npz (zip) nor a .npy file, nor a folder of IDX files");
  }
  const std::string what = not_a_regular_file(path);
  if (what == "does not exist") load_image_dataset(path);  // the message with the default data set's package
  throw UsageError(std::string(flag) + " " + parse::printable_path(path) + " " + what);
}

}  // namespace

LabelExtent Dataset::train_labels() const { return label_extent(*train, train_labels_file); }

LabelExtent Dataset::validation_labels() const {
  return validation ? label_extent(*validation, validation_labels_file) : LabelExtent{};
}

int Dataset::classes_needed() const {
  if (!class_names.empty()) return static_cast<int>(class_names.size());
  return std::max(train_labels().max, validation_labels().max) + 1;
}

std::string class_names_json(const std::vector<std::string>& names) {
  return nlohmann::json(names).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> class_names_from_json(const std::string& json, const std::string& what) {
  try {
    const nlohmann::json j = nlohmann::json::parse(json);
    if (!j.is_array()) throw std::runtime_error("not an array");
    std::vector<std::string> names;
    for (const nlohmann::json& n : j) names.push_back(n.get<std::string>());
    return names;
  } catch (const std::exception&) {
    throw UsageError(what + ": its class_names are not a JSON array of names");
  }
}

LabelExtent label_extent(const SampleSource& s, std::string where) {
  LabelExtent e;
  e.where = std::move(where);
  for (int64_t i = 0; i < s.size(); ++i)
    if (s.label(i) > e.max) {
      e.max = s.label(i);
      e.index = i;
    }
  return e;
}

Dataset load_dataset(const DataOptions& o) {
  Dataset ds;
  Loaded data = load_one(o.data, "--data", o, nullptr);
  ds.path = o.data;
  ds.kind = data.kind;
  ds.train = std::move(data.train);
  ds.train_labels_file = data.train_labels_file;
  ds.class_names = std::move(data.class_names);
  const bool folder = ds.kind == "image folder";
  if (!folder && (o.image_rows > 0 || o.channels > 0 || o.validation_split > 0 || o.cache))
    throw UsageError(std::string(o.image_rows > 0 ? "--image-size"
                                 : o.channels > 0  ? "--color-mode"
                                 : o.cache         ? "--cache"
                                                   : "--validation-split") +
                     " applies to image folders; " + parse::printable(o.data) + " is " +
                     (ds.kind == "IDX" ? "a folder of IDX files" : "NumPy arrays"));
  if (o.validation_data && o.validation_split > 0)
    throw UsageError("--validation-split and --validation-data do not go together: each gives the validation data");
  if (o.validation_data) {
    Loaded v = load_one(*o.validation_data, "--validation-data", o, &ds);
    if ((v.kind == "image folder") != folder)
      throw UsageError("--validation-data " + parse::printable(*o.validation_data) + " is " +
                       (folder ? "not an image folder, as --data is" : "an image folder, and --data is not"));
    ds.validation_path = *o.validation_data;
    // A source with a split of its own for validation gives that; else its data.
    if (v.validation) {
      ds.validation = std::move(v.validation);
      ds.validation_labels_file = v.validation_labels_file;
    } else {
      ds.validation = std::move(v.train);
      ds.validation_labels_file = v.train_labels_file;
    }
  } else if (data.validation) {
    ds.validation = std::move(data.validation);
    ds.validation_labels_file = data.validation_labels_file;
  }
  if (ds.validation && ds.validation->layout().shape() != ds.train->layout().shape())
    throw UsageError("the validation images are " + shape_text(ds.validation->layout()) + " but the training images " +
                     shape_text(ds.train->layout()) + " (" + parse::printable(ds.validation_path.empty() ? ds.path
                                                                                                        : ds.validation_path) +
                     ")");
  return ds;
}

}  // namespace axon::data
