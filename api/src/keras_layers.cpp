// axon::keras::layers, Images and the data sets: Keras configs and data as
// the core reads them.
#include <axon/api/keras.hpp>
#include <axon/data/arrays.hpp>
#include <axon/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace axon::keras {
namespace {

using json = nlohmann::json;

json pair_json(layers::Size2 p) { return json::array({p.first, p.second}); }

std::string activation_name(const std::string& activation) { return activation.empty() ? "linear" : activation; }

Layer make(const char* class_name, const json& config, const Shape& input_shape = {}) {
  return {class_name, config.dump(), input_shape};
}

json pooling(layers::Size2 pool_size, std::optional<layers::Size2> strides, const std::string& padding) {
  return {{"pool_size", pair_json(pool_size)}, {"strides", pair_json(strides.value_or(pool_size))},
          {"padding", padding}};
}

}  // namespace

namespace layers {

Layer Conv2D(int filters, Size2 kernel_size, const std::string& activation, const Shape& input_shape,
             const std::string& padding, Size2 strides) {
  return make("Conv2D",
              {{"filters", filters},
               {"kernel_size", pair_json(kernel_size)},
               {"strides", pair_json(strides)},
               {"padding", padding},
               {"activation", activation_name(activation)}},
              input_shape);
}

Layer MaxPooling2D(Size2 pool_size, std::optional<Size2> strides, const std::string& padding) {
  return make("MaxPooling2D", pooling(pool_size, strides, padding));
}

Layer AveragePooling2D(Size2 pool_size, std::optional<Size2> strides, const std::string& padding) {
  return make("AveragePooling2D", pooling(pool_size, strides, padding));
}

Layer Flatten(const Shape& input_shape) { return make("Flatten", json::object(), input_shape); }

Layer Dense(int units, const std::string& activation, const Shape& input_shape) {
  return make("Dense", {{"units", units}, {"activation", activation_name(activation)}}, input_shape);
}

Layer Dropout(double rate) { return make("Dropout", {{"rate", rate}}); }
Layer BatchNormalization() { return make("BatchNormalization", json::object()); }
Layer ReLU() { return make("ReLU", json::object()); }
Layer GlobalAveragePooling2D() { return make("GlobalAveragePooling2D", json::object()); }
Layer Rescaling(double scale, double offset, const Shape& input_shape) {
  return make("Rescaling", {{"scale", scale}, {"offset", offset}}, input_shape);
}

Layer Add() { return make("Add", json::object()); }
Layer Subtract() { return make("Subtract", json::object()); }
Layer Multiply() { return make("Multiply", json::object()); }
Layer Average() { return make("Average", json::object()); }
Layer Maximum() { return make("Maximum", json::object()); }
Layer Concatenate(int axis) { return make("Concatenate", {{"axis", axis}}); }

Layer from_config(const std::string& class_name, const std::string& config_json, const Shape& input_shape) {
  json config = json::parse(config_json, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    throw UsageError("layers::from_config(\"" + class_name + "\"): the config is not a JSON object: " + config_json);
  return {class_name, config.dump(), input_shape};
}

}  // namespace layers

namespace losses {
namespace {
nn::LossOptions of(nn::LossKind kind, bool from_logits = true, double label_smoothing = 0.0) {
  nn::LossOptions o;
  o.kind = kind;
  o.from_logits = from_logits;
  o.label_smoothing = static_cast<float>(label_smoothing);
  return o;
}
}  // namespace

nn::LossOptions SparseCategoricalCrossentropy(bool from_logits) {
  return of(nn::LossKind::sparse_categorical_crossentropy, from_logits);
}
nn::LossOptions CategoricalCrossentropy(bool from_logits, double label_smoothing) {
  return of(nn::LossKind::categorical_crossentropy, from_logits, label_smoothing);
}
nn::LossOptions BinaryCrossentropy(bool from_logits, double label_smoothing) {
  return of(nn::LossKind::binary_crossentropy, from_logits, label_smoothing);
}
nn::LossOptions MeanSquaredError() { return of(nn::LossKind::mean_squared_error); }
nn::LossOptions MeanAbsoluteError() { return of(nn::LossKind::mean_absolute_error); }
nn::LossOptions Huber(double delta) {
  nn::LossOptions o = of(nn::LossKind::huber);
  o.delta = static_cast<float>(delta);
  return o;
}

}  // namespace losses

namespace metrics {

Metric::Metric(const std::string& name) {
  if (nn::is_accuracy_name(name)) return;
  options = nn::metric_from_name(name);
  if (!options) throw UsageError("compile: unknown metric \"" + name + "\"; axon has " + nn::metric_names());
}

namespace {
Metric of(nn::MetricKind kind, int k, const std::string& name) {
  nn::MetricOptions o;
  o.kind = kind;
  o.k = k;
  o.name = name;
  nn::check_metrics({o});
  return o;
}
}  // namespace

Metric MeanSquaredError(const std::string& name) { return of(nn::MetricKind::mean_squared_error, 5, name); }
Metric MeanAbsoluteError(const std::string& name) { return of(nn::MetricKind::mean_absolute_error, 5, name); }
Metric TopKCategoricalAccuracy(int k, const std::string& name) {
  return of(nn::MetricKind::top_k_categorical_accuracy, k, name);
}
Metric SparseTopKCategoricalAccuracy(int k, const std::string& name) {
  return of(nn::MetricKind::sparse_top_k_categorical_accuracy, k, name);
}

}  // namespace metrics

// ---------------------------------------------------------------- data

namespace {

data::ImageSet image_set(const Shape& shape, data::PixelFormat format) {
  if (shape.size() != 3 && shape.size() != 4)
    throw UsageError("Images: the shape must be [N, H, W] or [N, H, W, C], got " + shape_string(shape));
  numel(shape);  // UsageError for a negative dimension
  data::ImageSet set;
  set.count = shape[0], set.rows = shape[1], set.cols = shape[2], set.channels = shape.size() == 4 ? shape[3] : 1;
  set.format = format;
  set.labels.assign(static_cast<size_t>(set.count), 0);
  return set;
}

void check_count(const Shape& shape, size_t values) {
  if (static_cast<int64_t>(values) != numel(shape))
    throw UsageError("Images: " + std::to_string(values) + " values do not fill shape " + shape_string(shape));
}

}  // namespace

Images Images::from_uint8(const Shape& shape, std::vector<uint8_t> values) {
  check_count(shape, values.size());
  data::ImageSet set = image_set(shape, data::PixelFormat::kUint8);
  set.images = std::move(values);
  return Images(std::move(set));
}

Images Images::from_float(const Shape& shape, const std::vector<float>& values) {
  check_count(shape, values.size());
  data::ImageSet set = image_set(shape, data::PixelFormat::kFloat32);
  set.images.resize(values.size() * sizeof(float));
  std::memcpy(set.images.data(), values.data(), set.images.size());
  return Images(std::move(set));
}

Images Images::slice(int64_t begin, int64_t end) const {
  begin = std::clamp<int64_t>(begin, 0, size());
  end = std::clamp<int64_t>(end, begin, size());
  data::ImageSet s = set_;
  const auto bytes = static_cast<size_t>(set_.image_bytes());
  s.count = end - begin;
  s.images.assign(set_.images.begin() + static_cast<ptrdiff_t>(begin * bytes),
                  set_.images.begin() + static_cast<ptrdiff_t>(end * bytes));
  s.labels.assign(set_.labels.begin() + begin, set_.labels.begin() + end);
  return Images(std::move(s));
}

Labels slice(const Labels& y, int64_t begin, int64_t end) {
  const auto n = static_cast<int64_t>(y.size());
  begin = std::clamp<int64_t>(begin, 0, n);
  end = std::clamp<int64_t>(end, begin, n);
  return Labels(y.begin() + begin, y.begin() + end);
}

namespace datasets {
namespace {

datasets::Split split(data::ImageSet set) {
  Labels y(set.labels.begin(), set.labels.end());
  return {Images(std::move(set)), std::move(y)};
}

// A folder of IDX files, or a .npz in Keras' layout. A path that is neither
// a file nor named .npz is read as a folder, whose loader names the files
// and the package expected.
Data load(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path) && path.extension() != ".npz") {
    data::ImageDataset d = data::load_image_dataset(path);
    return {split(std::move(d.train)), split(std::move(d.test))};
  }
  data::ArrayDataset d = data::load_npz(path);
  if (!d.has_test) throw UsageError(path.string() + " has no x_test and y_test");
  return {split(std::move(d.train)), split(std::move(d.test))};
}

}  // namespace

namespace mnist {
Data load_data(const std::filesystem::path& path) {
  if (!path.empty()) return load(path);
  const char* home = std::getenv("HOME");
  return load(std::filesystem::path(home ? home : "") / ".keras/datasets/mnist.npz");
}
}  // namespace mnist

namespace fashion_mnist {
Data load_data(const std::filesystem::path& path) {
  return load(path.empty() ? std::filesystem::path(data::kDefaultDataDir) : path);
}
}  // namespace fashion_mnist

}  // namespace datasets
}  // namespace axon::keras
