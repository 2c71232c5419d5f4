// The guide's CNN against Keras 3 with each optimizer (tests/goldens/tf/
// cnn_optimizers.axg, from tools/tf-goldens/optimizers.py): from the same
// initial weights, ten steps of batch 32 on the first 320 Fashion-MNIST
// training images in order, on the CPU device and on the reference device.
// Every step's mean loss within kLossTol of Keras' and, after the tenth step,
// every weight within kWeightTol of Keras'. Observed (CPU, AVX-512): losses
// within 1.2e-6 and weights within 2.6e-5 (RMSprop centered: its first steps
// move a weight by up to 3e-3, and divide by a small variance). Power: each
// configuration moves the weights over ten steps by 1e-2 to 5e-2 (largest
// weight change); a missing weight decay (AdamW's 0.5 x 1e-3 per step) or
// clipping (8 of the 10 gradients are above clipnorm 0.1) moves them by
// more than 1e-4.
#include "golden_file.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/model.hpp>
#include <axon/runtime.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

using namespace axon;
namespace golden = axon::golden;

namespace {

constexpr double kLossTol = 1e-5;
constexpr double kWeightTol = 1e-4;

Runtime& runtime() {
  if (!Runtime::initialised()) {
    Config c = Config::from_environment();
    c.visible_devices.reset();
    Runtime::init(c);
  }
  return Runtime::get();
}

// The Keras optimizers of tools/tf-goldens/optimizers.py's CONFIGS, by case name.
nn::OptimizerOptions config(const std::string& name) {
  nn::OptimizerOptions o;
  using K = nn::OptimizerKind;
  if (name == "cnn/sgd_nesterov") {
    o.kind = K::sgd;
    o.learning_rate = 0.01f;
    o.momentum = 0.9f;
    o.nesterov = true;
  } else if (name == "cnn/rmsprop_centered") {
    o.kind = K::rmsprop;
    o.learning_rate = 0.001f;
    o.centered = true;
  } else if (name == "cnn/adamw_weight_decay") {
    o.kind = K::adamw;
    o.learning_rate = 0.001f;
    o.weight_decay = 0.5f;
  } else if (name == "cnn/adam_amsgrad") {
    o.kind = K::adam;
    o.learning_rate = 0.001f;
    o.amsgrad = true;
  } else if (name == "cnn/sgd_clipnorm") {
    o.kind = K::sgd;
    o.learning_rate = 0.05f;
    o.momentum = 0.9f;
    o.clipnorm = 0.1f;
  } else if (name == "cnn/adagrad") {
    o.kind = K::adagrad;
    o.learning_rate = 0.01f;
  } else if (name == "cnn/nadam_global_clipnorm") {
    o.kind = K::nadam;
    o.learning_rate = 0.001f;
    o.global_clipnorm = 0.3f;
  } else {
    FAIL("no optimizer configuration for " << name);
  }
  return o;
}

void check_config(const char* device_name, const golden::Case& data, const golden::Case& keras) {
  Device* d = runtime().find_device(device_name);
  REQUIRE(d != nullptr);
  INFO("device " << d->name() << ", " << keras.name << " (" << keras.attr("flags") << ")");
  DeviceScope scope(*d);
  auto model = nn::make_cnn(10);
  model->build({28, 28, 1}, *d, 1);
  model->compile(config(keras.name));
  for (nn::Parameter* p : model->parameters()) {
    const std::vector<float> v = data.named("in:" + p->name).values<float>();
    REQUIRE(static_cast<int64_t>(v.size()) == p->value.numel());
    p->value.copy_from_host(v.data(), v.size() * sizeof(float));
  }
  const std::vector<uint8_t> images = data.named("in:images").values<uint8_t>();
  const std::vector<int32_t> labels = data.named("in:labels").values<int32_t>();
  const std::vector<float> keras_loss = keras.named("out:loss").values<float>();
  const int64_t steps = std::atoi(data.attr("steps").c_str()), batch = std::atoi(data.attr("batch_size").c_str());
  REQUIRE(static_cast<int64_t>(keras_loss.size()) == steps);
  for (int64_t step = 0; step < steps; ++step) {
    data::HostBatch b;
    b.size = batch;
    const auto first = static_cast<std::ptrdiff_t>(step * batch);
    b.images.assign(images.begin() + first * 784, images.begin() + (first + batch) * 784);
    b.labels.assign(labels.begin() + first, labels.begin() + first + batch);
    model->train_step(b);
    double loss = 0;
    for (float v : model->per_sample_loss(batch).to_vector<float>()) loss += v;
    loss /= double(batch);
    INFO("step " << step + 1 << ": loss axon " << loss << ", Keras " << keras_loss[static_cast<size_t>(step)]);
    CHECK(std::fabs(loss - keras_loss[static_cast<size_t>(step)]) <= kLossTol);
  }
  double worst = 0;
  std::string where;
  for (nn::Parameter* p : model->parameters()) {
    const std::vector<float> want = keras.named("out:" + p->name).values<float>();
    const std::vector<float> got = p->value.to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const double diff = std::fabs(double(got[i]) - want[i]);
      if (!(diff <= worst)) {
        worst = diff;
        where = p->name + "[" + std::to_string(i) + "]: axon " + std::to_string(got[i]) + ", Keras " +
                std::to_string(want[i]);
      }
    }
  }
  INFO("largest weight difference after " << steps << " steps: " << worst << " at " << where);
  CHECK(worst <= kWeightTol);
}

}  // namespace

TEST_CASE("the CNN's first ten steps with each optimizer match Keras on the CPU and reference devices",
          "[goldens][cnn][optimizers]") {
  const std::vector<golden::Case> cases = golden::read_file(AXON_GOLDEN_CNN_OPTIMIZERS);
  REQUIRE(cases.size() == 8);
  REQUIRE(cases[0].name == "cnn/data");
  for (const char* device : {"cpu:0", "ref:0"})
    for (size_t c = 1; c < cases.size(); ++c) {
      DYNAMIC_SECTION(device << " " << cases[c].name) { check_config(device, cases[0], cases[c]); }
    }
}
