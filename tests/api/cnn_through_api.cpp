// The run axon-train makes of its built-in CNN (same data, seed, batch,
// optimizer, loss), written with the C++ API alone: app_equals_api_test.py
// compares the weights it saves and its CSV with axon-train's, byte for byte.
//   cnn_through_api --data DIR --train-limit N --test-limit N --epochs E --batch-size B --seed S
//                   [--strategy default|mirrored] --save FILE --metrics-csv FILE
// The devices (threads, logical CPU devices) come from the AXON_* variables.
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

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
    if (strategy != "default" && strategy != "mirrored") throw axon::UsageError("unknown strategy " + strategy);
    if (save.empty() || csv.empty()) throw axon::UsageError("--save and --metrics-csv are needed");

    auto [train, test] = keras::datasets::fashion_mnist::load_data(data);
    if (train_limit > 0) train = {train.x.slice(0, train_limit), keras::slice(train.y, 0, train_limit)};
    if (test_limit > 0) test = {test.x.slice(0, test_limit), keras::slice(test.y, 0, test_limit)};

    std::unique_ptr<axon::distribute::MirroredStrategy> mirrored;
    std::optional<axon::distribute::StrategyScope> scope;
    if (strategy == "mirrored") {
      mirrored = std::make_unique<axon::distribute::MirroredStrategy>();
      scope.emplace(mirrored->strategy());
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
    model.fit(train.x, train.y,
              {.epochs = epochs,
               .batch_size = batch_size,
               .validation_data = test,
               .verbose = 0,
               .callbacks = {keras::callbacks::CSVLogger(csv)},
               .seed = seed});
    model.save_weights(save);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cnn_through_api: %s\n", e.what());
    return 1;
  }
}
