// The run axon-train makes of its built-in CNN (same data, seed, batch,
// optimizer, loss), written with the C++ API alone: app_equals_api_test.py
// compares the weights it saves and its CSV with axon-train's, byte for byte.
// The data set goes to fit as it loaded (a data::SampleSource), as a Keras
// program passes a tf.data.Dataset.
//   cnn_through_api --data DIR --train-limit N --test-limit N --epochs E --batch-size B --seed S
//                   [--strategy default|mirrored|multi-worker] --save FILE --metrics-csv FILE
// The devices (threads, logical CPU devices) come from the AXON_* variables.
// multi-worker: started by mpirun; the chief (rank 0) alone writes the files.
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace keras = axon::keras;
using namespace axon::keras::layers;

int main(int argc, char** argv) {
  try {
    std::string data, strategy = "default", save, csv;
    int epochs = 1;
    int64_t train_limit = 0, test_limit = 0, batch_size = 32;
    uint64_t seed = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i], value = argv[i + 1];
      if (flag == "--data") data = value;
      else if (flag == "--train-limit") train_limit = std::atoll(value.c_str());
      else if (flag == "--test-limit") test_limit = std::atoll(value.c_str());
      else if (flag == "--epochs") epochs = std::atoi(value.c_str());
      else if (flag == "--batch-size") batch_size = std::atoll(value.c_str());
      else if (flag == "--seed") seed = std::strtoull(value.c_str(), nullptr, 10);
      else if (flag == "--strategy") strategy = value;
      else if (flag == "--save") save = value;
      else if (flag == "--metrics-csv") csv = value;
      else throw axon::UsageError("unknown option " + flag);
    }
    if (strategy != "default" && strategy != "mirrored" && strategy != "multi-worker")
      throw axon::UsageError("unknown strategy " + strategy);
    if (save.empty() || csv.empty()) throw axon::UsageError("--save and --metrics-csv are needed");

    // As in TensorFlow, the multi-worker strategy first: it joins the job.
    std::unique_ptr<axon::distribute::MultiWorkerMirroredStrategy> multi_worker;
    if (strategy == "multi-worker") multi_worker = std::make_unique<axon::distribute::MultiWorkerMirroredStrategy>();
    const bool chief = multi_worker == nullptr || multi_worker->is_chief();

    // The data sets as they load, passed to fit whole.
    auto [train, test] = keras::datasets::fashion_mnist::load_data(data);
    axon::data::ImageSet train_set = train.x.set(), test_set = test.x.set();
    for (size_t i = 0; i < train.y.size(); ++i) train_set.labels[i] = static_cast<uint8_t>(train.y[i]);
    for (size_t i = 0; i < test.y.size(); ++i) test_set.labels[i] = static_cast<uint8_t>(test.y[i]);
    if (train_limit > 0) train_set.truncate(train_limit);
    if (test_limit > 0) test_set.truncate(test_limit);

    std::unique_ptr<axon::distribute::MirroredStrategy> mirrored;
    std::optional<axon::distribute::StrategyScope> scope;
    if (strategy == "mirrored") {
      mirrored = std::make_unique<axon::distribute::MirroredStrategy>();
      scope.emplace(mirrored->strategy());
    } else if (multi_worker) {
      scope.emplace(multi_worker->strategy());
    }
    keras::utils::set_random_seed(seed);
    keras::Sequential model({
        Conv2D(32, {3, 3}, "relu", {28, 28, 1}),
        MaxPooling2D({2, 2}),
        Conv2D(64, {3, 3}, "relu"),
        MaxPooling2D({2, 2}),
        Conv2D(64, {3, 3}, "relu"),
        Flatten(),
        Dense(64, "relu"),
        Dense(10),
    });
    // axon-train's defaults: Adam at 0.001, logits into sparse categorical cross-entropy.
    model.compile(keras::optimizers::Adam(0.001), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true),
                  {"accuracy"});
    std::vector<keras::callbacks::Callback> callbacks;
    if (chief) callbacks.push_back(keras::callbacks::CSVLogger(csv));
    model.fit(train_set, {.epochs = epochs,
                          .batch_size = batch_size,
                          .validation_data = test_set,
                          .verbose = 0,
                          .callbacks = callbacks,
                          .seed = seed});
    if (chief) model.save_weights(save);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cnn_through_api: %s\n", e.what());
    return 1;
  }
}
