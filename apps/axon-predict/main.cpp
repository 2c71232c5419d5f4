// axon-predict WEIGHTS.safetensors INPUT...: the model of the weights file
// (its Keras JSON and class names are in the file's metadata, as axon-train
// --save writes them; --model gives the JSON otherwise) classifies image
// files, folders of them, a .npz or a .npy, in batches on the best device,
// and prints one CSV row per sample: the input (file, or index into the
// array), the predicted class, its probability, and with --top-k K the next
// K classes and theirs. A summary line (samples, images/s) goes to stderr.
// See docs/training.md.
#include "device_choice.hpp"

#include <axon/cli.hpp>
#include <axon/data/arrays.hpp>
#include <axon/data/batches.hpp>
#include <axon/data/byte_stream.hpp>
#include <axon/data/dataset.hpp>
#include <axon/data/image_folder.hpp>
#include <axon/io/read_file.hpp>
#include <axon/io/safetensors.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>
#include <axon/runtime.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/weights.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>

using namespace axon;
namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

const char* const kExamples = R"(
Examples:
  axon-predict cnn.safetensors photo.png                 the class of one image
  axon-predict cnn.safetensors photos/ --top-k 2 --output predictions.csv
  axon-predict cnn.safetensors fashion.npz --device cpu:0   the .npz's x_test (else x_train)
  axon-predict weights.axw --model cnn.json images.npy      axon's own format: the model from --model

Exit codes: 0 success, 1 runtime failure, 2 bad usage or bad input.
)";

struct Options {
  std::string weights;
  std::vector<std::string> inputs;
  std::optional<std::string> model_file, output, device;
  int top_k = 0;
  int64_t batch_size = 32;
  int64_t image_rows = 0, image_cols = 0;
  int channels = 0;
  bool quiet = false;
  Config config;
};

std::optional<Options> parse_options(int argc, char** argv) {
  po::options_description main("Usage: axon-predict [options] WEIGHTS INPUT...\n\n"
                               "Classifies images (files or folders of PNG, JPEG, BMP, GIF) or NumPy arrays (.npz, "
                               "IMAGES.npy) with a model axon-train saved, one CSV row per sample");
  main.add_options()
    ("help,h", "show this help and exit")
    ("model", po::value<std::string>()->value_name("FILE"),
     "the model's Keras JSON (default: the weights file's metadata, as axon-train --save writes it, or a .keras "
     "file's model)")
    ("top-k", po::value<int>()->value_name("K")->default_value(0), "also the next K classes and their probabilities")
    ("output", po::value<std::string>()->value_name("FILE"), "write the CSV (atomically) to FILE instead of stdout")
    ("batch-size", po::value<int64_t>()->value_name("N")->default_value(32), "samples per batch")
    ("image-size", po::value<std::string>()->value_name("H,W"),
     "resize images to H x W (TensorFlow's bilinear resize; must be the model's input); default: images of "
     "another size than the model's input are resized to it")
    ("color-mode", po::value<std::string>()->value_name("MODE"),
     "grayscale, rgb or rgba (must give the model's input channels); default: the model's")
    ("device", po::value<std::string>()->value_name("DEV"), "run on DEV (cpu:0, gpu:0); default: the best device")
    ("quiet,q", po::bool_switch(), "no summary line on stderr");
  po::options_description devices("Devices");
  cli::add_device_options(devices);
  po::options_description all;
  all.add(main).add(devices);
  po::options_description hidden;
  hidden.add_options()("positional", po::value<std::vector<std::string>>());
  po::options_description parsed;
  parsed.add(all).add(hidden);
  po::positional_options_description positional;
  positional.add("positional", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(parsed).positional(positional).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << all << kExamples;
    return std::nullopt;
  }
  Options o;
  std::vector<std::string> words;
  if (vm.count("positional")) words = vm["positional"].as<std::vector<std::string>>();
  if (words.size() < 2) throw UsageError("usage: axon-predict [options] WEIGHTS INPUT... (see --help)");
  o.weights = words[0];
  o.inputs.assign(words.begin() + 1, words.end());
  if (vm.count("model")) o.model_file = vm["model"].as<std::string>();
  if (vm.count("output")) o.output = vm["output"].as<std::string>();
  if (vm.count("device")) o.device = vm["device"].as<std::string>();
  o.top_k = vm["top-k"].as<int>();
  if (o.top_k < 0 || o.top_k > 1000) throw UsageError("--top-k must be from 0 to 1000, got " + std::to_string(o.top_k));
  o.batch_size = vm["batch-size"].as<int64_t>();
  if (o.batch_size < 1 || o.batch_size > limits::kMaxBatchSize)
    throw UsageError("--batch-size must be from 1 to " + std::to_string(limits::kMaxBatchSize) + ", got " +
                     std::to_string(o.batch_size));
  if (vm.count("image-size")) cli::parse_image_size(vm["image-size"].as<std::string>(), o.image_rows, o.image_cols);
  if (vm.count("color-mode")) o.channels = cli::parse_color_mode(vm["color-mode"].as<std::string>());
  o.quiet = vm["quiet"].as<bool>();
  o.config = cli::make_config(vm);
  if (o.output) train::check_output_file(*o.output, "--output");
  return o;
}

// The CSV field: quoted when it holds a comma, quote or line break.
std::string csv(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// What to classify: image files and folders together, or one array file.
std::unique_ptr<data::SampleSource> load_inputs(const Options& o, const Shape& input) {
  if (o.inputs.size() == 1) {
    const fs::path p(o.inputs[0]);
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && data::looks_like_zip(p))
      return std::make_unique<data::ImageSet>(data::load_npz_images(p));
    if (fs::is_regular_file(p, ec) && data::looks_like_npy(p))
      return std::make_unique<data::ImageSet>(data::load_npy_images(p));
  }
  std::vector<fs::path> files;
  for (const std::string& in : o.inputs) {
    const fs::path p(in);
    const std::string what = data::not_a_regular_file(p);
    std::error_code ec;
    if (!what.empty() && !fs::is_directory(p, ec)) throw UsageError(parse::printable(in) + " " + what);
    if (what.empty() && (data::looks_like_zip(p) || data::looks_like_npy(p)))
      throw UsageError(parse::printable(in) + ": a .npz or .npy is classified alone, not among other inputs");
    files.push_back(p);
  }
  data::ImageFolderOptions f;
  f.rows = input[0];
  f.cols = input[1];
  f.channels = static_cast<int>(input[2]);
  f.resize = o.image_rows > 0;
  f.resize_if_needed = !f.resize;
  f.progress = !o.quiet;
  return data::image_files(files, f);
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run_main("axon-predict", [&] {
    std::optional<Options> parsed = parse_options(argc, argv);
    if (!parsed) return 0;
    const Options& o = *parsed;

    // The weights file: its model and class names, checked before any device starts.
    std::string model_json, source = o.weights;
    std::vector<std::string> class_names;
    // The largest weights file of a model within the limits, and its metadata.
    const uint64_t max_bytes = static_cast<uint64_t>(limits::kMaxModelParameters) * 4 + (uint64_t{32} << 20);
    std::string weights_bytes = io::read_regular_file(o.weights, max_bytes, "weights file");
    if (train::is_safetensors_file(o.weights)) {
      io::SafetensorsFile st = io::parse_safetensors(weights_bytes);
      if (st.metadata().count("model") != 0) model_json = st.meta("model");
      if (st.metadata().count("class_names") != 0)
        class_names = data::class_names_from_json(st.meta("class_names"), o.weights);
    } else if (train::is_keras_file(o.weights)) {
      model_json = train::read_keras_config(o.weights);  // a .keras file holds its model
    }
    if (o.model_file) {
      model_json = io::read_regular_file(*o.model_file, limits::kMaxModelJsonBytes, "--model file");
      source = *o.model_file;
    }
    if (model_json.empty())
      throw UsageError(o.weights + ": no model in its metadata (axon-train --save FILE.safetensors or FILE.keras keeps "
                       "it): pass --model FILE.json");
    nn::KerasModel k = nn::model_from_keras_json(model_json, source);
    train::check_weights(train::WeightLayout::packed(k.weights), weights_bytes, o.weights);
    if (o.image_rows > 0 && (o.image_rows != k.input_shape[0] || o.image_cols != k.input_shape[1]))
      throw UsageError("--image-size " + std::to_string(o.image_rows) + "," + std::to_string(o.image_cols) +
                       " is not the model's input " + shape_string(k.input_shape));
    if (o.channels > 0 && o.channels != k.input_shape[2])
      throw UsageError("--color-mode gives " + std::to_string(o.channels) + " channels, the model's input has " +
                       std::to_string(k.input_shape[2]));
    const int64_t classes = k.output_shape[0];

    std::unique_ptr<data::SampleSource> inputs = load_inputs(o, k.input_shape);
    if (inputs->layout().shape() != k.input_shape)
      throw UsageError(parse::printable(o.inputs[0]) + ": images of " + data::shape_text(inputs->layout()) +
                       ", the model's input is " + shape_string(k.input_shape));
    const std::vector<std::string>* paths = data::image_paths(*inputs);

    Runtime& rt = Runtime::init(o.config);
    const train_app::DeviceChoice choice = train_app::choose_device(rt, o.device);
    k.model->build(k.input_shape, *choice.device, 0);
    train::set_weights(*k.model, weights_bytes, o.weights);
    std::string().swap(weights_bytes);

    std::string header = "input,class,probability";
    for (int j = 2; j <= o.top_k + 1; ++j) {
      header += ",class_";
      header += std::to_string(j);
      header += ",probability_";
      header += std::to_string(j);
    }
    std::string text = header + "\n";
    auto flush_text = [&] {
      if (!o.output) {
        std::fputs(text.c_str(), stdout);
        text.clear();
      }
    };
    auto name_of = [&](int64_t c) {
      return c < static_cast<int64_t>(class_names.size()) ? class_names[static_cast<size_t>(c)] : std::to_string(c);
    };

    const auto t0 = std::chrono::steady_clock::now();
    data::BatchPipeline pipeline(*inputs, o.batch_size, false, 0, true);
    pipeline.begin_epoch(0);
    std::vector<float> logits;
    std::vector<double> p(static_cast<size_t>(classes));
    std::vector<int64_t> order(static_cast<size_t>(classes));
    for (int64_t s = 0; s < pipeline.steps(); ++s) {
      const data::HostBatch& batch = pipeline.next();
      const Tensor y = k.model->forward(batch);
      logits.resize(static_cast<size_t>(y.numel()));
      y.copy_to_host(logits.data(), y.bytes());
      for (int64_t i = 0; i < batch.size; ++i) {
        // Softmax in double from the logits (the model's softmax is folded into the loss).
        const float* l = logits.data() + i * classes;
        const float top = *std::max_element(l, l + classes);
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c) sum += p[static_cast<size_t>(c)] = std::exp(double{l[c]} - top);
        for (double& v : p) v /= sum;
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
          return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)];
        });
        const int64_t index = s * o.batch_size + i;
        text += csv(paths != nullptr ? (*paths)[static_cast<size_t>(index)] : std::to_string(index));
        for (int j = 0; j <= o.top_k && j < classes; ++j) {
          char prob[32];
          std::snprintf(prob, sizeof prob, "%.6f", p[static_cast<size_t>(order[static_cast<size_t>(j)])]);
          text += ',';
          text += csv(name_of(order[static_cast<size_t>(j)]));
          text += ',';
          text += prob;
        }
        text += "\n";
      }
      flush_text();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.output) train::write_file_atomically(*o.output, text);
    if (!o.quiet)
      std::fprintf(stderr, "Predicted %lld samples on %s in %.2f s: %.0f images/s\n",
                   static_cast<long long>(inputs->size()), choice.device->name().c_str(), seconds,
                   seconds > 0 ? static_cast<double>(inputs->size()) / seconds : 0.0);
    return 0;
  });
}
