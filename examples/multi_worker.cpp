// strategy = tf.distribute.MultiWorkerMirroredStrategy()
// with strategy.scope(): model = ...; model.compile(...)
// model.fit(x, y, epochs=1, batch_size=64)
// Run by mpirun (mpirun -np 2 axon-example-multi_worker): every worker runs
// this same program; each global batch is split over the replicas of all
// workers and the gradients summed over all of them. Without mpirun it is a
// job of one worker. Without a GPU each worker splits its CPU into two
// logical devices, as the mirrored example does. Options: --train-limit N (1024).
#include <axon/axon.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace keras = axon::keras;
using namespace axon::keras::layers;

int main(int argc, char** argv) {
  try {
    int64_t train_limit = 1024;
    if (argc == 3 && !std::strcmp(argv[1], "--train-limit")) train_limit = std::atoll(argv[2]);
    if (axon::config::list_physical_devices("GPU").empty())
      axon::config::set_logical_device_configuration(axon::config::list_physical_devices("CPU").at(0), {{}, {}});

    axon::distribute::MultiWorkerMirroredStrategy strategy;
    if (strategy.is_chief())
      std::printf("Number of workers: %d, replicas in sync: %d\n", strategy.num_workers(),
                  strategy.num_replicas_in_sync());

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
    // Every worker holds the same weights, so every worker evaluates the same.
    std::printf("Worker %d: accuracy %.4f, test accuracy %.4f\n", strategy.worker_rank(),
                h.history.at("accuracy").at(0), r.accuracy);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multi_worker: error: %s\n", e.what());
    return 1;
  }
}
