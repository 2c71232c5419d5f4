// Keras' own applications (keras.applications: ConvNeXtTiny, also with
// drop_path_rate 0.1, DenseNet121, EfficientNetB0 and EfficientNetV2B0,
// InceptionResNetV2, InceptionV3, MobileNet V1 to V3, NASNetMobile,
// ResNet50 V1 and V2, VGG16, Xception), as
// tools/tf-goldens/keras_applications.py wrote them with 10 classes at small
// inputs: each is read, with Keras' trainable and non-trainable parameter
// counts, its input and output, the same model again from the JSON axon
// writes, and one training step on the CPU gives every weight a finite
// gradient.
#include "train_test_util.hpp"

#include <axon/nn/keras_json.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <cmath>
#include <string>

using namespace axon;
using namespace axon::nn;

namespace {

const std::string kDir = std::string(AXON_TEST_DATA_DIR) + "/keras_applications/";

std::string gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  REQUIRE(f != nullptr);
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return text;
}

// "Trainable params: 1,234" -> 1234, from axon's summary.
int64_t summary_count(const std::string& summary, const std::string& label) {
  const size_t at = summary.find("\n" + label + ": ");
  REQUIRE(at != std::string::npos);
  int64_t n = 0;
  for (size_t i = at + label.size() + 3; i < summary.size() && summary[i] != '\n'; ++i)
    if (summary[i] >= '0' && summary[i] <= '9') n = n * 10 + (summary[i] - '0');
  return n;
}

}  // namespace

TEST_CASE("Keras' applications: read with Keras' parameter counts, written back, one step trained",
          "[keras][applications]") {
  const nlohmann::json counts = nlohmann::json::parse(test::read_all(kDir + "counts.json"));
  REQUIRE(counts.size() == 16);
  Device& cpu = test::test_cpu();
  for (const auto& [name, want] : counts.items()) {
    DYNAMIC_SECTION(name) {
      const std::string text = gunzip(kDir + name + ".json.gz");
      const KerasModel k = model_from_keras_json(text, name + ".json");
      CHECK(k.input_shape == want["input"].get<Shape>());
      CHECK(k.output_shape == want["output"].get<Shape>());
      const std::string summary = k.model->summary(k.input_shape);
      const int64_t trainable = want["trainable"], fixed = want["non_trainable"];
      CHECK(summary_count(summary, "Trainable params") == trainable);
      CHECK(summary_count(summary, "Non-trainable params") == fixed);
      CHECK(k.parameters == trainable + fixed);

      const std::string written = keras_json(*k.model, k.input_shape);
      const KerasModel again = model_from_keras_json(written, name + " as written");
      CHECK(again.weights == k.weights);
      CHECK(keras_json(*again.model, again.input_shape) == written);

      Model& m = *k.model;
      m.build(k.input_shape, cpu, 1);
      m.compile();
      data::HostBatch batch;
      batch.size = 2;
      Rng rng(7);
      for (int64_t i = 0; i < 2 * numel(k.input_shape); ++i) batch.images.push_back(static_cast<uint8_t>(rng.below(256)));
      batch.labels = {3, 8};
      m.compute_gradients(batch);
      for (float v : m.per_sample_loss(2).to_vector<float>()) CHECK(std::isfinite(v));
      int64_t finite = 0, total = 0;
      for (Parameter* p : m.parameters())
        for (float g : p->grad.to_vector<float>()) {
          finite += std::isfinite(g) ? 1 : 0;
          ++total;
        }
      CHECK(total == trainable);
      CHECK(finite == total);
    }
  }
}
