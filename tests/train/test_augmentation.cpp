// Keras' augmentation layers: each against what Keras 3 makes of the same
// draws (augment_goldens.txt, written by tools/tf-goldens/augment_goldens.py;
// every fill mode and interpolation of the projective transform), built
// through axon's Keras reader from Keras' own JSON; the forward pass's keyed
// draws (the same for a sample whatever replica computes it, new each step,
// the identity at inference); the input left as raw pixels when only
// augmentations stand before a Rescaling; and the models refused.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/augmentation.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/model.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

using namespace axon;
using namespace axon::nn;
using Catch::Matchers::Contains;

namespace {

std::vector<float> floats_of_hex(const std::string& hex) {
  std::vector<float> v(hex.size() / 8);
  std::vector<unsigned char> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

struct GoldenCase {
  std::string name, model_json;
  bool training = true;
  int64_t n = 0, h = 0, w = 0, c = 0, out_h = 0, out_w = 0;
  std::vector<float> in, draws, out;
};

std::vector<GoldenCase> golden_cases() {
  std::ifstream file(std::string(AXON_TEST_DATA_DIR) + "/../train/augment_goldens.txt");
  REQUIRE(file);
  std::vector<GoldenCase> cases;
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    GoldenCase g;
    int training = 0;
    std::string in, draws, out;
    s >> g.name >> training >> g.n >> g.h >> g.w >> g.c >> in >> draws >> g.out_h >> g.out_w >> out;
    std::getline(s >> std::ws, g.model_json);
    g.training = training != 0;
    g.in = floats_of_hex(in), g.draws = floats_of_hex(draws), g.out = floats_of_hex(out);
    cases.push_back(std::move(g));
  }
  return cases;
}

// The model's first layer (an augmentation), built on `d` for the case's images.
ImageAugmentation& first_layer(KerasModel& k, Device& d, uint64_t seed = 1) {
  auto* layer = dynamic_cast<ImageAugmentation*>(k.model->layers().at(0));
  REQUIRE(layer != nullptr);
  Rng rng(seed);
  layer->build(k.input_shape, d, rng);
  return *layer;
}

// A replica's view of a step, for a layer used on its own.
struct FixedStep : StepContext {
  int64_t step = 0, first = 0;
  void all_reduce(Tensor&, const std::string&) override {}
  int64_t global_samples() const override { return 0; }
  int64_t step_index() const override { return step; }
  int64_t first_sample() const override { return first; }
};

// A layer's training forward at a given step and first sample, as a
// replica's step would run it.
struct TrainingForward {
  FixedStep step;
  ImageAugmentation& layer;
  explicit TrainingForward(ImageAugmentation& l) : layer(l) {
    layer.set_step_context(&step);
    layer.set_training(true);
    layer.set_backprop(false);
  }
  std::vector<float> operator()(int64_t at_step, int64_t first, const Tensor& in) {
    step.step = at_step, step.first = first;
    return layer.forward(in).to_vector<float>();
  }
};

const char* const kFlipRotate = R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 6, 5, 2], "name": "input_layer"}},
  {"class_name": "RandomRotation", "config": {"name": "rot", "factor": 0.2}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 3}}]}})";

}  // namespace

TEST_CASE("augmentation layers: Keras 3's images for the same draws, within 1e-5", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  const std::vector<GoldenCase> cases = golden_cases();
  REQUIRE(cases.size() >= 30);
  for (const GoldenCase& g : cases) {
    INFO(g.name);
    KerasModel k = model_from_keras_json(g.model_json, g.name + ".json");
    ImageAugmentation& layer = first_layer(k, d);
    REQUIRE(layer.output_shape() == Shape{g.out_h, g.out_w, g.c});
    const int64_t in_floats = g.h * g.w * g.c, out_floats = g.out_h * g.out_w * g.c;
    REQUIRE(static_cast<int64_t>(g.out.size()) == g.n * out_floats);
    std::vector<float> got(static_cast<size_t>(out_floats));
    double worst = 0;
    for (int64_t i = 0; i < g.n; ++i) {
      ImageAugmentation::Draw draw{};
      for (size_t j = 0; j < 4; ++j) draw[j] = g.draws[static_cast<size_t>(i * 4) + j];
      if (g.training)
        layer.transform(g.in.data() + i * in_floats, draw, got.data());
      else
        layer.infer(g.in.data() + i * in_floats, got.data());
      for (int64_t e = 0; e < out_floats; ++e) {
        const float want = g.out[static_cast<size_t>(i * out_floats + e)];
        const double diff = std::fabs(static_cast<double>(got[static_cast<size_t>(e)]) - want) /
                            std::max(1.0, std::fabs(static_cast<double>(want)));
        worst = std::isnan(diff) ? std::numeric_limits<double>::infinity() : std::max(worst, diff);  // NaN fails
      }
    }
    INFO("largest difference " << worst);
    CHECK(worst <= 1e-5);
  }
}

TEST_CASE("augmentation draws: keyed by step and sample, whatever replica computes them", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  KerasModel k = model_from_keras_json(kFlipRotate, "m.json");
  ImageAugmentation& layer = first_layer(k, d);
  const int64_t n = 6, per = 6 * 5 * 2;
  std::vector<float> pixels(static_cast<size_t>(n * per));
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>((i * 37) % 101) / 100.0f;
  Tensor x = make_tensor(d, {n, 6, 5, 2}, pixels);
  TrainingForward run(layer);
  const std::vector<float> whole = run(5, 0, x);
  // Each sample as its own draw would make it.
  std::vector<float> one(static_cast<size_t>(per));
  for (int64_t i = 0; i < n; ++i) {
    Rng r = layer.stream(5, i);
    layer.transform(pixels.data() + i * per, layer.draw(r), one.data());
    CHECK(std::equal(one.begin(), one.end(), whole.begin() + i * per));
  }
  // The second half computed by another replica (its samples start at 3).
  Tensor half = make_tensor(d, {3, 6, 5, 2}, std::vector<float>(pixels.begin() + 3 * per, pixels.end()));
  const std::vector<float> second = run(5, 3, half);
  CHECK(std::equal(second.begin(), second.end(), whole.begin() + 3 * per));
  // Another step draws again; inference is the identity.
  CHECK(run(6, 0, x) != whole);
  CHECK(run(5, 0, x) == whole);
  layer.set_training(false);
  CHECK(layer.forward(x).to_vector<float>() == pixels);
}

TEST_CASE("RandomGaussianBlur: one pair of sigmas a batch, as Keras draws them; the chances per image",
          "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  KerasModel k = model_from_keras_json(R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s",
    "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 5, 5, 1], "name": "input_layer"}},
      {"class_name": "RandomGaussianBlur", "config": {"name": "blur", "factor": [1, 1], "sigma": [0.3, 2.0]}},
      {"class_name": "Flatten", "config": {"name": "flatten"}},
      {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}})",
                                       "m.json");
  ImageAugmentation& layer = first_layer(k, d);
  const int64_t n = 4, per = 25;
  std::vector<float> pixels(static_cast<size_t>(n * per), 0.0f);
  for (int64_t i = 0; i < n; ++i) pixels[static_cast<size_t>(i * per + 12)] = 255.0f;  // a point in the centre
  Tensor x = make_tensor(d, {n, 5, 5, 1}, pixels);
  TrainingForward run(layer);
  // Every image blurred (factor [1, 1]) by the batch's one pair of sigmas:
  // the same spread of the point in every image, whichever replica.
  const std::vector<float> whole = run(3, 0, x);
  for (int64_t i = 1; i < n; ++i) CHECK(std::equal(whole.begin(), whole.begin() + per, whole.begin() + i * per));
  CHECK(whole[12] < 255.0f);
  Tensor half = make_tensor(d, {2, 5, 5, 1}, std::vector<float>(pixels.begin() + 2 * per, pixels.end()));
  const std::vector<float> second = run(3, 2, half);
  CHECK(std::equal(second.begin(), second.end(), whole.begin() + 2 * per));
  CHECK(run(4, 0, x) != whole);  // the next batch's sigmas
  // The draws: the chance and uniform per image, the sigmas (+ 1e-6) in range.
  Rng rng(37);
  const auto& blur = dynamic_cast<const RandomGaussianBlur&>(layer);
  for (int i = 0; i < 1000; ++i) {
    ImageAugmentation::Draw draw = blur.draw(rng);
    REQUIRE(draw[0] == 1.0f);
    blur.with_batch_part(*blur.batch_part(rng), draw);
    INFO("draw " << i << ": " << draw[2] << ", " << draw[3]);
    REQUIRE((draw[2] >= 0.3f && draw[2] <= 2.0f + 1e-5f && draw[3] >= 0.3f && draw[3] <= 2.0f + 1e-5f));
  }
}

TEST_CASE("augmentation layers: a Keras seed fixes the draws, else the run's seed does", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  auto draw_of = [&](const std::string& json, uint64_t run_seed) {
    KerasModel k = model_from_keras_json(json, "m.json");
    ImageAugmentation& l = first_layer(k, d, run_seed);
    Rng r = l.stream(0, 0);
    return l.draw(r)[0];
  };
  const std::string unseeded = kFlipRotate;
  std::string seeded = unseeded;
  seeded.replace(seeded.find(R"("factor": 0.2)"), 13, R"("factor": 0.2, "seed": 42)");
  CHECK(draw_of(unseeded, 1) == draw_of(unseeded, 1));
  CHECK(draw_of(unseeded, 1) != draw_of(unseeded, 2));
  CHECK(draw_of(seeded, 1) == draw_of(seeded, 2));
  // and the draw lies in the factor's range: 0.2 x 360 degrees either way
  for (uint64_t s = 1; s < 50; ++s) CHECK(std::fabs(draw_of(unseeded, s)) <= 72.0f);
}

TEST_CASE("augmentations before a Rescaling: the model gets the raw pixels, as Keras' fit would", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  // sum of the pixels / 255 with ones as the Dense kernel: 255 x larger if axon
  // had divided by 255 first.
  auto output = [&](const std::string& middle) {
    const std::string json = R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1], "name": "input_layer"}},)" +
                             middle + R"(
      {"class_name": "Flatten", "config": {"name": "flatten"}},
      {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}})";
    KerasModel k = model_from_keras_json(json, "m.json");
    k.model->build(k.input_shape, d, 1);
    for (Parameter* p : k.model->parameters())
      p->value.copy_from_host(std::vector<float>(static_cast<size_t>(p->value.numel()), p->name.ends_with("kernel") ? 1.0f : 0.0f).data(),
                              p->value.bytes());
    data::HostBatch batch;
    batch.size = 1;
    batch.images.assign(16, 51);  // 16 pixels of 51: 816 in all
    batch.labels = {0};
    return k.model->forward(batch).to_vector<float>()[0];
  };
  const std::string flip = R"({"class_name": "RandomFlip", "config": {"name": "flip"}},)";
  const std::string contrast = R"({"class_name": "RandomContrast", "config": {"name": "contrast", "factor": 0.1}},)";
  const std::string rescale = R"({"class_name": "Rescaling", "config": {"name": "rescale", "scale": 0.00392156862745098}},)";
  CHECK(output(flip + contrast + rescale) == Approx(816.0 / 255).epsilon(1e-6));
  CHECK(output(rescale + flip) == Approx(816.0 / 255).epsilon(1e-6));
  CHECK(output(flip) == Approx(816.0 / 255).epsilon(1e-6));  // no Rescaling: axon divides by 255
}

TEST_CASE("augmentation layers: refused after a layer with weights, and bad configs, with one line each", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  auto model = [](const std::string& layers) {
    return R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s", "layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "name": "input_layer"}},)" +
           layers + R"(
      {"class_name": "Flatten", "config": {"name": "flatten"}},
      {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}})";
  };
  KerasModel k = model_from_keras_json(
      model(R"({"class_name": "Conv2D", "config": {"name": "conv", "filters": 2, "kernel_size": 3}},
               {"class_name": "RandomFlip", "config": {"name": "flip"}},)"),
      "m.json");
  CHECK_THAT(test::usage_error([&] { k.model->build(k.input_shape, d, 1); }),
             Contains("RandomFlip 'flip' follows a layer with weights") && Contains("before the first layer with weights"));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"class_name": "RandomRotation", "config": {"name": "r", "factor": 1.5}},)", "factor is 1.5"},
      {R"({"class_name": "RandomTranslation", "config": {"name": "t", "height_factor": 0.1, "width_factor": [0.1, 2]}},)",
       "width_factor is [0.1,2]"},
      {R"({"class_name": "RandomZoom", "config": {"name": "z", "height_factor": 0.1, "fill_mode": "mirror"}},)",
       "fill_mode is \"mirror\""},
      {R"({"class_name": "RandomZoom", "config": {"name": "z", "height_factor": 0.1, "interpolation": "bicubic"}},)",
       "interpolation is \"bicubic\""},
      {R"({"class_name": "RandomContrast", "config": {"name": "c", "factor": -0.2}},)", "factor is -0.2"},
      {R"({"class_name": "RandomContrast", "config": {"name": "c", "factor": 0.2, "value_range": [1, 0]}},)",
       "value_range is [1,0]"},
      {R"({"class_name": "RandomBrightness", "config": {"name": "b", "factor": [-0.2, 1.5]}},)",
       "factor is [-0.2,1.5]; Keras takes a number or a pair from -1.0 to 1.0"},
      {R"({"class_name": "RandomBrightness", "config": {"name": "b", "factor": 0.2, "value_range": [0, "255"]}},)",
       "value_range is [0,\"255\"]; axon takes a pair of finite numbers"},
      {R"({"class_name": "RandomBrightness", "config": {"name": "b"}},)", "has no factor"},
      {R"({"class_name": "RandomGrayscale", "config": {"name": "g", "factor": 1.5}},)",
       "factor is 1.5; Keras takes a number from 0 to 1"},
      {R"({"class_name": "RandomShear", "config": {"name": "s", "x_factor": 1.5}},)",
       "x_factor is 1.5; Keras takes a number or a pair from -1.0 to 1.0"},
      {R"({"class_name": "RandomShear", "config": {"name": "s", "y_factor": 0.2, "fill_mode": "mirror"}},)",
       "fill_mode is \"mirror\""},
      {R"({"class_name": "RandomInvert", "config": {"name": "i", "factor": 1.5}},)",
       "factor is 1.5; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "RandomInvert", "config": {"name": "i", "value_range": [0, null]}},)",
       "value_range is [0,null]; axon takes a pair of finite numbers"},
      {R"({"class_name": "Solarization", "config": {"name": "s", "threshold_factor": [0.2, 1.2]}},)",
       "threshold_factor is [0.2,1.2]; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "Solarization", "config": {"name": "s", "value_range": [0.5, 0.5]}},)",
       "value_range holds one number twice"},
      {R"({"class_name": "RandomColorDegeneration", "config": {"name": "c", "factor": [-1.5, 0.2]}},)",
       "factor is [-1.5,0.2]; Keras takes a number or a pair from -1.0 to 1.0"},
      {R"({"class_name": "RandomPosterization", "config": {"name": "p", "factor": 9}},)",
       "factor is 9; Keras takes a number or a pair from 1.0 to 8.0"},
      {R"({"class_name": "RandomPosterization", "config": {"name": "p", "factor": [2, 4.5]}},)",
       "factor is [2,4.5]; axon takes whole bit counts"},
      {R"({"class_name": "RandomPosterization", "config": {"name": "p"}},)", "has no factor"},
      {R"({"class_name": "RandomSharpness", "config": {"name": "s", "factor": 1.5}},)",
       "factor is 1.5; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "AutoContrast", "config": {"name": "a", "value_range": [2, 2]}},)",
       "value_range holds one number twice"},
      {R"({"class_name": "RandomSaturation", "config": {"name": "s", "factor": [0.2, 1.5]}},)",
       "factor is [0.2,1.5]; Keras takes a number or a pair from -1.0 to 1.0"},
      {R"({"class_name": "RandomSaturation", "config": {"name": "s"}},)", "has no factor"},
      {R"({"class_name": "RandomHue", "config": {"name": "h", "factor": -0.2}},)",
       "factor is -0.2; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "RandomHue", "config": {"name": "h", "factor": 0.2, "value_range": [1, 1]}},)",
       "value_range holds one number twice"},
      {R"({"class_name": "RandomGaussianBlur", "config": {"name": "b", "kernel_size": [3, 4]}},)",
       "kernel_size is [3,4]; Keras takes odd sizes"},
      {R"({"class_name": "RandomGaussianBlur", "config": {"name": "b", "sigma": [1.5, 2]}},)",
       "sigma is [1.5,2]; Keras takes a number from 0 to 1 or a pair whose first is at most 1"},
      {R"({"class_name": "RandomGaussianBlur", "config": {"name": "b", "sigma": 1.5}},)",
       "sigma is 1.5; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "RandomColorJitter", "config": {"name": "j", "value_range": [255, 0]}},)",
       "value_range is [255,0]; axon takes a rising pair of numbers"},
      {R"({"class_name": "RandomColorJitter", "config": {"name": "j", "contrast_factor": [0.1, 1.5]}},)",
       "contrast_factor is [0.1,1.5]; Keras takes a number or a pair from 0.0 to 1.0"},
      {R"({"class_name": "RandomFlip", "config": {"name": "f", "mode": "diagonal"}},)", "mode is \"diagonal\""},
      {R"({"class_name": "RandomCrop", "config": {"name": "c", "height": 0, "width": 4}},)", "height"},
      {R"({"class_name": "RandomTranslation", "config": {"name": "t", "height_factor": 0.1}},)", "has no width_factor"},
      {R"({"class_name": "Resizing", "config": {"name": "r", "height": 4, "width": 4, "interpolation": "bicubic"}},)",
       "interpolation is \"bicubic\"; axon reads bilinear and nearest"},
      {R"({"class_name": "Resizing", "config": {"name": "r", "height": 4, "width": 4, "pad_to_aspect_ratio": true}},)",
       "pad_to_aspect_ratio is true"},
      {R"({"class_name": "Resizing", "config": {"name": "r", "height": 4, "width": 4, "antialias": true}},)",
       "antialias is true"},
      {R"({"class_name": "Resizing", "config": {"name": "r", "height": 4}},)", "has no width"},
      {R"({"class_name": "CenterCrop", "config": {"name": "c", "height": 4, "width": 0}},)", "width"},
  };
  for (const auto& [layer, why] : bad) {
    INFO(layer);
    const std::string msg = test::usage_error([&] { model_from_keras_json(model(layer), "m.json"); });
    CHECK_THAT(msg, Contains("m.json") && Contains(why));
    CHECK(msg.find('\n') == std::string::npos);
  }
  // RandomColorDegeneration reads RGB images only, as Keras' rgb_to_grayscale.
  CHECK_THAT(test::usage_error([&] {
               model_from_keras_json(model(R"({"class_name": "RandomColorDegeneration", "config": {"name": "c",
                                               "factor": 0.5}},)"),
                                     "m.json");
             }),
             Contains("m.json") && Contains("RandomColorDegeneration 'c'") &&
                 Contains("needs an RGB image (3 channels), gets 1 channels"));
  // RandomSaturation and RandomHue too, as TensorFlow's rgb_to_hsv, and
  // RandomColorJitter with either.
  for (const char* type : {"RandomSaturation", "RandomHue"})
    CHECK_THAT(test::usage_error([&] {
                 model_from_keras_json(
                     model(std::string(R"({"class_name": ")") + type + R"(", "config": {"name": "c", "factor": 0.5}},)"),
                     "m.json");
               }),
               Contains("m.json") && Contains(std::string(type) + " 'c'") &&
                   Contains("needs an RGB image (3 channels), gets 1 channels"));
  CHECK_THAT(test::usage_error([&] {
               model_from_keras_json(model(R"({"class_name": "RandomColorJitter", "config": {"name": "j",
                                               "brightness_factor": 0.1, "hue_factor": 0.2}},)"),
                                     "m.json");
             }),
             Contains("RandomColorJitter 'j'") && Contains("needs an RGB image (3 channels), gets 1 channels"));
  // RandomGrayscale reads RGB or grey images only, as Keras' rgb_to_grayscale.
  std::string two_channels = model(R"({"class_name": "RandomGrayscale", "config": {"name": "g"}},)");
  two_channels.replace(two_channels.find("[null, 8, 8, 1]"), 15, "[null, 8, 8, 2]");
  CHECK_THAT(test::usage_error([&] { model_from_keras_json(two_channels, "m.json"); }),
             Contains("m.json") && Contains("RandomGrayscale 'g'") &&
                 Contains("needs an RGB or grey image (3 or 1 channels), gets 2 channels"));
}

TEST_CASE("augmentation layers: written back as Keras JSON that reads into the same layers", "[augmentation]") {
  Device& d = test::test_cpu();
  DeviceScope scope(d);
  for (const GoldenCase& g : golden_cases()) {
    INFO(g.name);
    KerasModel k = model_from_keras_json(g.model_json, "a.json");
    KerasModel again = model_from_keras_json(keras_json(*k.model, k.input_shape), "b.json");
    ImageAugmentation& a = first_layer(k, d);
    ImageAugmentation& b = first_layer(again, d);
    CHECK(std::string(a.type()) == b.type());
    const int64_t out_floats = g.out_h * g.out_w * g.c;
    std::vector<float> ya(static_cast<size_t>(out_floats)), yb(ya.size());
    ImageAugmentation::Draw draw{};
    for (size_t j = 0; j < 4; ++j) draw[j] = g.draws[j];
    a.transform(g.in.data(), draw, ya.data());
    b.transform(g.in.data(), draw, yb.data());
    CHECK(ya == yb);
    Rng ra(7), rb(7);  // the ranges drawn from, written back too
    CHECK(a.draw(ra) == b.draw(rb));
  }
}

TEST_CASE("RandomShear: a symmetric range written as its number, which Keras 3.15 reads back", "[augmentation]") {
  // Keras writes x_factor=f as [-f, f] but refuses a negative bound when it
  // reads: axon writes f, and a range that is not symmetric as its pair.
  KerasModel k = model_from_keras_json(R"({"module": "keras", "class_name": "Sequential", "config": {"name": "s",
    "layers": [{"class_name": "InputLayer", "config": {"batch_shape": [null, 9, 11, 3], "name": "input_layer"}},
      {"class_name": "RandomShear", "config": {"name": "shear", "x_factor": [-0.5, 0.5], "y_factor": [0.3, 0.1]}},
      {"class_name": "Flatten", "config": {"name": "flatten"}},
      {"class_name": "Dense", "config": {"name": "dense", "units": 2}}]}})",
                                       "m.json");
  const nlohmann::json j = nlohmann::json::parse(keras_json(*k.model, k.input_shape));
  const nlohmann::json& config = j["config"]["layers"][1]["config"];
  CHECK(config["x_factor"] == 0.5);
  CHECK(config["y_factor"] == nlohmann::json::array({0.1, 0.3}));
}

TEST_CASE("RandomShear draws: both shears from their ranges, negated together on half the draws", "[augmentation]") {
  RandomShear shear({0.2, 0.4}, {0.1, 0.3});
  Rng rng(11);
  int negative = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const ImageAugmentation::Draw d = shear.draw(rng);
    INFO("draw " << i << ": " << d[0] << ", " << d[1]);
    REQUIRE(((d[0] < 0) == (d[1] < 0)));
    REQUIRE((std::fabs(d[0]) >= 0.2f && std::fabs(d[0]) <= 0.4f));
    REQUIRE((std::fabs(d[1]) >= 0.1f && std::fabs(d[1]) <= 0.3f));
    negative += d[0] < 0;
  }
  CHECK(std::abs(negative - n / 2) < 150);  // 4.7 standard deviations
}

TEST_CASE("RandomInvert draws: a chance from the factor's range, inverting on that share of the draws",
          "[augmentation]") {
  RandomInvert invert({0.2, 0.6});
  Rng rng(13);
  int inverted = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const ImageAugmentation::Draw d = invert.draw(rng);
    INFO("draw " << i << ": " << d[0] << ", " << d[1]);
    REQUIRE((d[0] >= 0.2f && d[0] <= 0.6f));
    REQUIRE((d[1] >= 0.0f && d[1] < 1.0f));
    inverted += d[1] < d[0];
  }
  // The chance's mean, 0.4: 1,600 of 4,000, 31 draws a standard deviation.
  CHECK(std::abs(inverted - 1600) < 150);
}

TEST_CASE("Solarization draws: each from its factor's lower bound to 255 times its upper", "[augmentation]") {
  Solarization solarize({0.1, 0.5}, {0.0, 0.8});
  Rng rng(17);
  float most_addition = 0, most_threshold = 0;
  for (int i = 0; i < 2000; ++i) {
    const ImageAugmentation::Draw d = solarize.draw(rng);
    INFO("draw " << i << ": " << d[0] << ", " << d[1]);
    REQUIRE((d[0] >= 0.1f && d[0] <= 0.5f * 255));
    REQUIRE((d[1] >= 0.0f && d[1] <= 0.8f * 255));
    most_addition = std::max(most_addition, d[0]), most_threshold = std::max(most_threshold, d[1]);
  }
  CHECK(most_addition > 0.9f * 0.5f * 255);  // the upper bound scaled, as Keras draws
  CHECK(most_threshold > 0.9f * 0.8f * 255);
}

TEST_CASE("RandomSaturation draws: u from the factor's range, kept as the multiplier u / (1 - u + 1e-7)",
          "[augmentation]") {
  RandomSaturation saturate({-0.5, 0.9});
  Rng rng(23);
  float least = 1, most = 0;
  for (int i = 0; i < 4000; ++i) {
    const float f = saturate.draw(rng)[0];
    INFO("draw " << i << ": " << f);
    const float u = f / (1 + f);  // the draw's u, within float rounding
    REQUIRE((u >= -0.5f - 1e-5f && u <= 0.9f + 1e-5f));
    least = std::min(least, u), most = std::max(most, u);
  }
  CHECK(least < -0.45f);  // the whole range is drawn
  CHECK(most > 0.85f);
  CHECK(RandomSaturation({0.5, 0.5}).draw(rng)[0] == 0.5f / (1.0f - 0.5f + 1e-7f));  // about 1: the image kept
}

TEST_CASE("RandomHue draws: half of f from the factor's range, up or down with even odds", "[augmentation]") {
  RandomHue hue({0.2, 0.6});
  Rng rng(29);
  int down = 0;
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const float shift = hue.draw(rng)[0];
    INFO("draw " << i << ": " << shift);
    REQUIRE((std::fabs(shift) >= 0.1f && std::fabs(shift) <= 0.3f));
    down += shift < 0;
  }
  CHECK(std::abs(down - n / 2) < 150);  // 4.7 standard deviations
}

TEST_CASE("RandomColorJitter draws: each given step's draw from its own range, in Keras' order", "[augmentation]") {
  RandomColorJitter jitter({FactorRange{-0.2, 0.1}, FactorRange{0.0, 0.3}, std::nullopt, FactorRange{0.0, 0.4}});
  Rng rng(31), twin(31);
  for (int i = 0; i < 2000; ++i) {
    const ImageAugmentation::Draw d = jitter.draw(rng);
    INFO("draw " << i << ": " << d[0] << ", " << d[1] << ", " << d[2] << ", " << d[3]);
    REQUIRE((d[0] >= -0.2f && d[0] <= 0.1f));  // RandomBrightness' u
    REQUIRE((d[1] >= 1.0f && d[1] <= 1.3f));   // RandomContrast's factor, from [1 - 0, 1 + 0.3]
    REQUIRE(d[2] == 0.0f);                     // no saturation step
    REQUIRE(std::fabs(d[3]) <= 0.2f);          // RandomHue's signed half
    // The same numbers as the three layers drawing one after another.
    const float b = RandomBrightness({-0.2, 0.1}).draw(twin)[0], c = RandomContrast({0.0, 0.3}).draw(twin)[0];
    REQUIRE((d[0] == b && d[1] == c && d[3] == RandomHue({0.0, 0.4}).draw(twin)[0]));
  }
}

TEST_CASE("RandomPosterization draws: every bit count from the lower bound below the upper, evenly", "[augmentation]") {
  RandomPosterization posterize(2, 6);
  Rng rng(19);
  std::array<int, 9> count{};
  const int n = 4000;
  for (int i = 0; i < n; ++i) {
    const ImageAugmentation::Draw d = posterize.draw(rng);
    INFO("draw " << i << ": " << d[0]);
    REQUIRE((d[0] == std::floor(d[0]) && d[0] >= 2 && d[0] <= 5));  // Keras' randint leaves 6 out
    ++count[static_cast<size_t>(d[0])];
  }
  for (int b = 2; b <= 5; ++b) CHECK(std::abs(count[static_cast<size_t>(b)] - n / 4) < 150);  // 5.5 sd
  CHECK(RandomPosterization(4, 4).draw(rng)[0] == 4);  // equal bounds: that count
}
