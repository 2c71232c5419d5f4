// A small residual network with Keras' functional API, trained for one short
// epoch on Fashion-MNIST with a cosine learning-rate schedule and
// BackupAndRestore, saved as a .keras file and loaded back:
//   inputs = keras.Input((28, 28, 1))
//   x = layers.Conv2D(16, 3, padding='same', activation='relu')(inputs)
//   y = layers.Conv2D(16, 3, padding='same', activation='relu')(x)
//   y = layers.Conv2D(16, 3, padding='same')(y)
//   x = layers.ReLU()(layers.Add()([x, y]))
//   x = layers.MaxPooling2D(2)(x)
//   x = layers.MaxPooling2D(2)(layers.Conv2D(32, 3, activation='relu')(x))
//   outputs = layers.Dense(10)(layers.Flatten()(x))
//   model = keras.Model(inputs, outputs, name='residual')
//   schedule = keras.optimizers.schedules.CosineDecay(0.01, decay_steps=steps)
//   model.compile(optimizer=keras.optimizers.Adam(schedule), loss=SparseCategoricalCrossentropy(from_logits=True),
//                 metrics=['accuracy'])
//   history = model.fit(x_train, y_train, epochs=1, batch_size=64, validation_data=(x_test, y_test),
//                       callbacks=[keras.callbacks.BackupAndRestore('backup')])
//   model.save('residual.keras'); restored = keras.models.load_model('residual.keras')
// Options: --train-limit N and --test-limit N (the first N images; all by
// default), --data PATH (a folder of IDX files or a .npz), --backup-dir DIR
// (backup), --save FILE (residual.keras).
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace keras = axon::keras;
using namespace axon::keras::layers;

int main(int argc, char** argv) {
  try {
    int64_t train_limit = 0, test_limit = 0;
    std::string data, backup_dir = "backup", save = "residual.keras";
    for (int i = 1; i + 1 < argc; i += 2) {
      if (!std::strcmp(argv[i], "--train-limit")) train_limit = std::atoll(argv[i + 1]);
      else if (!std::strcmp(argv[i], "--test-limit")) test_limit = std::atoll(argv[i + 1]);
      else if (!std::strcmp(argv[i], "--data")) data = argv[i + 1];
      else if (!std::strcmp(argv[i], "--backup-dir")) backup_dir = argv[i + 1];
      else if (!std::strcmp(argv[i], "--save")) save = argv[i + 1];
      else throw axon::UsageError(std::string("unknown option ") + argv[i]);
    }

    auto [train, test] = keras::datasets::fashion_mnist::load_data(data);
    if (train_limit > 0) train = {train.x.slice(0, train_limit), keras::slice(train.y, 0, train_limit)};
    if (test_limit > 0) test = {test.x.slice(0, test_limit), keras::slice(test.y, 0, test_limit)};

    const keras::KerasTensor inputs = keras::Input({28, 28, 1});
    keras::KerasTensor x = Conv2D(16, {3, 3}, "relu", {}, "same")(inputs);
    keras::KerasTensor y = Conv2D(16, {3, 3}, "relu", {}, "same")(x);
    y = Conv2D(16, {3, 3}, "", {}, "same")(y);
    x = ReLU()(Add()({x, y}));
    x = MaxPooling2D({2, 2})(x);
    x = MaxPooling2D({2, 2})(Conv2D(32, {3, 3}, "relu")(x));
    const keras::KerasTensor outputs = Dense(10)(Flatten()(x));
    keras::Model model(inputs, outputs, "residual");

    const int64_t batch_size = 64, steps = (train.x.size() + batch_size - 1) / batch_size;
    const auto schedule = keras::optimizers::schedules::CosineDecay(
        {.initial_learning_rate = 0.01, .decay_steps = static_cast<double>(steps)});
    model.compile(keras::optimizers::Adam(schedule),
                  keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true), {"accuracy"});
    model.summary();

    const keras::History history =
        model.fit(train.x, train.y,
                  {.epochs = 1, .batch_size = batch_size, .validation_data = test,
                   .callbacks = {keras::callbacks::BackupAndRestore(backup_dir)}});
    // print(history.history), in Keras' key order.
    std::string line;
    for (const char* key : {"accuracy", "loss", "val_accuracy", "val_loss"}) {
      line += std::string(line.empty() ? "{" : ", ") + "'" + key + "': [";
      const auto& values = history.history.at(key);
      for (size_t e = 0; e < values.size(); ++e) line += (e ? ", " : "") + std::to_string(values[e]);
      line += "]";
    }
    std::printf("%s}\n", line.c_str());

    const keras::Evaluation before = model.evaluate(test.x, test.y, batch_size);
    std::printf("Test accuracy: %.4f (loss %.4f, %lld images)\n", before.accuracy, before.loss,
                static_cast<long long>(test.x.size()));
    model.save(save);
    keras::Model restored = keras::models::load_model(save);
    const keras::Evaluation after = restored.evaluate(test.x, test.y, batch_size);
    std::printf("Restored from %s: test accuracy %.4f (loss %.4f), %s\n", save.c_str(), after.accuracy, after.loss,
                after.loss == before.loss && after.accuracy == before.accuracy ? "the same" : "DIFFERENT");
    return after.loss == before.loss && after.accuracy == before.accuracy ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "residual: error: %s\n", e.what());
    return 1;
  }
}
