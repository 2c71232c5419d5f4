// The guide's CNN against Keras end to end (tests/goldens/tf/cnn_adam.axg,
// from tools/tf-goldens/generate.py): from the initial weights Keras started
// from, three Adam steps on the first 192 Fashion-MNIST training images in
// order (batches of 64), on the CPU device and on the reference device.
//  - The first batch's gradients, before any update: per tensor, the norm of
//    the difference within kGradNorm of the norm of Keras' gradient, and
//    every element within kGradElement times the tensor's RMS. Observed:
//    norms within 4e-7 and elements within 5e-6 of the RMS, except
//    conv2d/kernel: norm 4e-5 (2e-4 with the baseline instruction set),
//    elements 5e-4 (2.2e-3) of the RMS. The first layer's pool windows over
//    the images' flat background hold ties and near-ties (thousands per
//    channel), and where their largest values differ by a rounding, each
//    implementation's rounding sends the gradient to its own tap. Power: a
//    gradient off by 0.1% of its tensor's norm, or one element off by 1% of
//    a typical gradient; one image of 64 ignored moves each tensor's
//    gradient by 6-13% of its norm (Keras, this batch).
//  - After each step, the batch's mean loss within kLossTol (observed
//    2.3e-7) and every weight within kWeightTol (observed 1.4e-5, the ties
//    above amplified by Adam; one step moves a weight by up to the learning
//    rate, 1e-3). Adam's first steps are nearly sign(g), so these catch
//    forward bugs (through the loss) and gross update bugs; the gradient
//    check above catches the subtle ones.
#include "golden_file.hpp"
#include "golden_runtime.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/model.hpp>
#include <axon/runtime.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace axon;
namespace golden = axon::golden;

namespace {

constexpr double kGradNorm = 1e-3, kGradElement = 1e-2;
constexpr double kLossTol = 2e-6;
constexpr double kWeightTol = 5e-5;

using golden::runtime;

struct Worst {
  double diff = 0;
  std::string where;
};

void check_device(const char* device_name, const std::vector<golden::Case>& cases) {
  Device* d = runtime().find_device(device_name);
  REQUIRE(d != nullptr);
  INFO("device " << d->name());
  DeviceScope scope(*d);
  auto model = nn::make_cnn(10);
  model->build({28, 28, 1}, *d, 1);
  model->compile();

  const golden::Case& data = cases.at(0);
  REQUIRE(data.name == "cnn/data");
  const std::vector<uint8_t> images = data.named("in:images").values<uint8_t>();
  const std::vector<int32_t> labels = data.named("in:labels").values<int32_t>();
  for (nn::Parameter* p : model->parameters()) {
    const golden::Tensor& t = data.named("in:" + p->name);
    REQUIRE(t.numel() == p->value.numel());
    const std::vector<float> v = t.values<float>();
    p->value.copy_from_host(v.data(), v.size() * sizeof(float));
  }

  {  // the first batch's gradients, before any update
    const golden::Case& keras = cases.at(1);
    data::HostBatch batch;
    batch.size = 64;
    batch.images.assign(images.begin(), images.begin() + 64 * 784);
    batch.labels.assign(labels.begin(), labels.begin() + 64);
    model->compute_gradients(batch);
    for (nn::Parameter* p : model->parameters()) {
      const std::vector<float> want = keras.named("out:grad/" + p->name).values<float>();
      const std::vector<float> got = p->grad.to_vector<float>();
      REQUIRE(got.size() == want.size());
      double sq = 0, diff_sq = 0;
      Worst worst;
      for (size_t i = 0; i < got.size(); ++i) {
        const double diff = std::fabs(double(got[i]) - want[i]);
        sq += double(want[i]) * want[i];
        diff_sq += diff * diff;
        if (!(diff <= worst.diff)) worst = {diff, std::to_string(i) + ": axon " + std::to_string(got[i]) + ", Keras " +
                                                      std::to_string(want[i])};
      }
      const double rms = std::sqrt(sq / double(want.size()));
      INFO("gradient of " << p->name << ": |difference| / |Keras| = " << std::sqrt(diff_sq / sq) << "; RMS " << rms
                          << ", largest difference " << worst.diff << " at " << worst.where);
      CHECK(std::sqrt(diff_sq) <= kGradNorm * std::sqrt(sq));
      CHECK(worst.diff <= kGradElement * rms);
    }
  }

  for (size_t step = 1; step <= 3; ++step) {
    const golden::Case& keras = cases.at(step);
    INFO(keras.name);
    data::HostBatch batch;
    batch.size = 64;
    const size_t first = (step - 1) * 64;
    batch.images.assign(images.begin() + static_cast<std::ptrdiff_t>(first * 784),
                        images.begin() + static_cast<std::ptrdiff_t>((first + 64) * 784));
    batch.labels.assign(labels.begin() + static_cast<std::ptrdiff_t>(first),
                        labels.begin() + static_cast<std::ptrdiff_t>(first + 64));
    model->train_step(batch);

    double loss = 0;
    for (float v : model->per_sample_loss(64).to_vector<float>()) loss += v;
    loss /= 64;
    const double keras_loss = keras.named("out:loss").values<float>().at(0);
    INFO("loss: axon " << loss << ", Keras " << keras_loss);
    CHECK(std::fabs(loss - keras_loss) <= kLossTol);

    Worst worst;
    for (nn::Parameter* p : model->parameters()) {
      const std::vector<float> want = keras.named("out:" + p->name).values<float>();
      const std::vector<float> got = p->value.to_vector<float>();
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        const double diff = std::fabs(double(got[i]) - want[i]);
        if (!(diff <= worst.diff)) worst = {diff, p->name + "[" + std::to_string(i) + "]"};
      }
    }
    INFO("largest weight difference " << worst.diff << " at " << worst.where);
    CHECK(worst.diff <= kWeightTol);
  }
}

}  // namespace

TEST_CASE("the CNN's first three Adam steps match Keras on the CPU and reference devices", "[goldens][cnn]") {
  const std::vector<golden::Case> cases = golden::read_file(AXON_GOLDEN_CNN);
  REQUIRE(cases.size() == 4);
  check_device("cpu:0", cases);
  check_device("ref:0", cases);
}
