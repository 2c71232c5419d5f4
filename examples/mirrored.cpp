// strategy = tf.distribute.MirroredStrategy()
// print('Number of devices: {}'.format(strategy.num_replicas_in_sync))
// with strategy.scope(): model = ...; model.compile(...)
// model.fit(x, y, epochs=1, batch_size=64)   # the global batch, split over the replicas
// Without a GPU the CPU is split into two logical devices first (the guide's
// set_logical_device_configuration(cpus[0], [LogicalDeviceConfiguration()] * 2)),
// so there are two replicas to mirror over. Options: --train-limit N (2048).
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace keras = axon::keras;
using namespace axon::keras::layers;

int main(int argc, char** argv) {
  try {
    int64_t train_limit = 2048;
    if (argc == 3 && !std::strcmp(argv[1], "--train-limit")) train_limit = std::atoll(argv[2]);
    if (axon::config::list_physical_devices("GPU").empty())
      axon::config::set_logical_device_configuration(axon::config::list_physical_devices("CPU").at(0), {{}, {}});

    axon::distribute::MirroredStrategy strategy;
    std::printf("Number of devices: %d\n", strategy.num_replicas_in_sync());

    auto [train, test] = keras::datasets::fashion_mnist::load_data();
    train = {train.x.slice(0, train_limit), keras::slice(train.y, 0, train_limit)};
    test = {test.x.slice(0, 1000), keras::slice(test.y, 0, 1000)};

    keras::Sequential model;
    {
      auto scope = strategy.scope();
      model = keras::Sequential({Conv2D(32, {3, 3}, "relu", {28, 28, 1}), MaxPooling2D({2, 2}), Flatten(),
                                 Dense(64, "relu"), Dense(10)});
      model.compile(keras::optimizers::Adam(), {.from_logits = true}, {"accuracy"});
    }
    const keras::History h = model.fit(train.x, train.y, {.epochs = 1, .batch_size = 64});
    const keras::Evaluation r = model.evaluate(test.x, test.y, 64);
    std::printf("Trained on %d replicas in %.2f s: accuracy %.4f, test accuracy %.4f\n",
                strategy.num_replicas_in_sync(), h.history.at("seconds").at(0), h.history.at("accuracy").at(0),
                r.accuracy);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mirrored: error: %s\n", e.what());
    return 1;
  }
}
