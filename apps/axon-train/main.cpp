// axon-train: trains the trainer's CNN (nn::make_cnn) on an MNIST-format data
// set and prints Keras-style progress. See docs/training.md.
#include "compare.hpp"
#include "device_choice.hpp"
#include "options.hpp"
#include "report.hpp"
#include "run.hpp"

#include <axon/cli.hpp>
#include <axon/data/mnist.hpp>
#include <axon/runtime.hpp>

#include <chrono>
#include <cstdio>

using namespace axon;

int main(int argc, char** argv) {
  return cli::run_main("axon-train", [&] {
    const std::optional<train_app::Options> parsed = train_app::parse_options(argc, argv);
    if (!parsed) return 0;
    const train_app::Options& opts = *parsed;

    // Data first: a missing or corrupt data set is reported before any plugin loads.
    const auto t0 = std::chrono::steady_clock::now();
    data::ImageDataset ds = data::load_image_dataset(opts.data_dir);
    ds.train.truncate(opts.train_limit > 0 ? opts.train_limit : ds.train.count);
    ds.test.truncate(opts.test_limit > 0 ? opts.test_limit : ds.test.count);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Runtime& rt = Runtime::init(opts.config);
    if (!opts.quiet)
      std::printf("Data: %s: %lld training and %lld test images of %lldx%lld (loaded in %.2f s)\n",
                  ds.folder.c_str(), static_cast<long long>(ds.train.count), static_cast<long long>(ds.test.count),
                  static_cast<long long>(ds.train.rows), static_cast<long long>(ds.train.cols), load_s);

    if (!opts.compare.empty()) return train_app::run_compare(rt, opts, ds);

    const train_app::DeviceChoice choice = train_app::choose_device(rt, opts.device);
    if (!opts.quiet) {
      std::printf("Training on %s (%s): %s\n", choice.device->name().c_str(), choice.device->props().name,
                  choice.reason.c_str());
      std::fflush(stdout);
    }
    train_app::train_on(*choice.device, opts, ds, true);
    if (opts.verbose) train_app::print_peak_rss(stdout);
    return 0;
  });
}
