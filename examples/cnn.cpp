// The guide's CNN on Fashion-MNIST, on the CPU (or the GPU when there is one):
//   model = models.Sequential([Conv2D(32, (3, 3), activation='relu', input_shape=(28, 28, 1)),
//                              MaxPooling2D((2, 2)), Conv2D(64, (3, 3), activation='relu'),
//                              MaxPooling2D((2, 2)), Conv2D(64, (3, 3), activation='relu'),
//                              Flatten(), Dense(64, activation='relu'), Dense(10)])
//   model.compile(optimizer='adam', loss=SparseCategoricalCrossentropy(from_logits=True), metrics=['accuracy'])
//   model.fit(x_train, y_train, epochs=5, batch_size=64, validation_data=(x_test, y_test))
// Options: --epochs N (5), --train-limit N and --test-limit N (the first N
// images; all by default), --data PATH (a folder of IDX files or a .npz).
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace keras = axon::keras;
using namespace axon::keras::layers;

int main(int argc, char** argv) {
  try {
    int epochs = 5;
    int64_t train_limit = 0, test_limit = 0;
    std::string data;
    for (int i = 1; i + 1 < argc; i += 2) {
      if (!std::strcmp(argv[i], "--epochs")) epochs = std::atoi(argv[i + 1]);
      else if (!std::strcmp(argv[i], "--train-limit")) train_limit = std::atoll(argv[i + 1]);
      else if (!std::strcmp(argv[i], "--test-limit")) test_limit = std::atoll(argv[i + 1]);
      else if (!std::strcmp(argv[i], "--data")) data = argv[i + 1];
      else throw axon::UsageError(std::string("unknown option ") + argv[i]);
    }

    auto [train, test] = keras::datasets::fashion_mnist::load_data(data);
    if (train_limit > 0) train = {train.x.slice(0, train_limit), keras::slice(train.y, 0, train_limit)};
    if (test_limit > 0) test = {test.x.slice(0, test_limit), keras::slice(test.y, 0, test_limit)};

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
    model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true),
                  {"accuracy"});
    model.summary();

    const keras::History history =
        model.fit(train.x, train.y, {.epochs = epochs, .batch_size = 64, .validation_data = test});
    for (size_t e = 0; e < history.history.at("seconds").size(); ++e)
      std::printf("Epoch %zu time: %.2f s\n", e + 1, history.history.at("seconds")[e]);

    const keras::Evaluation result = model.evaluate(test.x, test.y, 64);
    std::printf("Test accuracy: %.4f (loss %.4f, %lld images)\n", result.accuracy, result.loss,
                static_cast<long long>(test.x.size()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cnn: error: %s\n", e.what());
    return 1;
  }
}
