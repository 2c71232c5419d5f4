// Epoch benchmark: samples/s of one training epoch of the trainer's CNN or
// of any Keras model axon trains (--model FILE), the effective GFLOP/s
// (Model::training_flops_per_sample: forward + backward; 16.4 MFLOP per
// sample for the CNN), OpenBLAS's large-sgemm GFLOP/s measured here, their
// ratio, how long the loop waited for input, where the time goes per op and,
// per op, a roofline report: its FLOPs and bytes against the sgemm rate and a
// STREAM bandwidth and the least time of an op call, all measured in the
// same run (roofline.hpp, docs/training.md).
// It prints figures; it never asserts speed.
#include <axon/cli.hpp>
#include <axon/data/mnist.hpp>
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/model.hpp>
#include <axon/profile.hpp>
#include <axon/runtime.hpp>
#include <axon/train/atomic_file.hpp>

#include "call_floor.hpp"
#include "roofline.hpp"
#include "stream_rate.hpp"

#ifdef AXON_BENCH_HAVE_SGEMM
#include <sgemm_rate.hpp>
#endif

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

namespace po = boost::program_options;
using namespace axon;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#ifdef AXON_BENCH_HAVE_SGEMM
constexpr bool kSgemmInBuild = true;
#else
constexpr bool kSgemmInBuild = false;
#endif

// OpenBLAS's n x n x n sgemm GFLOP/s with `threads` (0: all CPUs), loaded the
// way the CPU plugin loads it; 0 when bench/kernels is not part of the build.
double sgemm_gflops(int n, int threads) {
#ifdef AXON_BENCH_HAVE_SGEMM
  return n > 0 ? axon::bench::sgemm_gflops(n, threads, 1.0) : 0;
#else
  (void)n, (void)threads;
  return 0;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run_main("axon-bench-train", [&] {
    po::options_description opts("Usage: axon-bench-train [options]");
    opts.add_options()("help,h", "show this help")
      ("data", po::value<std::string>()->default_value(data::kDefaultDataDir), "MNIST-format folder")
      ("model", po::value<std::string>(), "a Keras model JSON (model.to_json()) instead of the trainer's CNN")
      ("batch-size", po::value<int64_t>()->default_value(64), "batch size")
      ("epochs", po::value<int>()->default_value(2), "epochs timed; the fastest is reported (the machine is shared)")
      ("train-limit", po::value<int64_t>()->default_value(0), "samples per epoch (0: all 60000)")
      ("profile-steps", po::value<int64_t>()->default_value(100), "steps run with per-op timing (0: none)")
      ("device", po::value<std::string>(), "device (default: the highest-priority visible one)")
      ("sgemm-size", po::value<int>()->default_value(2048), "n of the n x n x n sgemm (0: not measured)")
      ("stream-mib", po::value<int64_t>()->default_value(0),
       "MiB per array of the STREAM bandwidth (0: 4 x the last-level cache, at least 64)")
      ("roofline-svg", po::value<std::string>(), "write the roofline of the profiled steps as an SVG to this file")
      ("roofline-layers", "after the roofline's table, one row per op and layer");
    cli::add_device_options(opts);
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts;
      return 0;
    }
    const int64_t batch = vm["batch-size"].as<int64_t>();
    if (batch < 1) throw UsageError("--batch-size must be at least 1");
    if (vm["stream-mib"].as<int64_t>() < 0 || vm["stream-mib"].as<int64_t>() > 65536)
      throw UsageError("--stream-mib must be 0 to 65536");
    const bool roofline = vm["profile-steps"].as<int64_t>() > 0 && vm["sgemm-size"].as<int>() > 0 && kSgemmInBuild;
    for (const char* flag : {"roofline-svg", "roofline-layers"})
      if (vm.count(flag) && !roofline)
        throw UsageError(std::string("--") + flag + " needs profiled steps and the sgemm rate (--profile-steps, "
                         "--sgemm-size, bench/kernels in the build)");
    if (vm.count("roofline-svg")) train::check_output_file(vm["roofline-svg"].as<std::string>(), "--roofline-svg");
    data::ImageDataset ds = data::load_image_dataset(vm["data"].as<std::string>());
    if (vm["train-limit"].as<int64_t>() > 0) ds.train.truncate(vm["train-limit"].as<int64_t>());

    Runtime& rt = Runtime::init(cli::make_config(vm));
    Device& dev = vm.count("device") ? rt.device(vm["device"].as<std::string>()) : rt.default_device();

    const int n = vm["sgemm-size"].as<int>();
    // sgemm is timed before the first epoch and after each one. A neighbour
    // on this shared machine moves single figures by tens of %, so the
    // fastest epoch is set beside the best sgemm figure of the whole run
    // (best beside best; more sgemm samples only make it stricter), and each
    // epoch's line shows the figures taken just around it.
    const int threads = rt.config().threads;
    std::vector<double> blas{sgemm_gflops(n, threads)};
    struct SgemmAfterEachEpoch : nn::Callback {
      std::vector<double>& out;
      int n, threads;
      SgemmAfterEachEpoch(std::vector<double>& o, int n_, int t) : out(o), n(n_), threads(t) {}
      void on_epoch_end(const nn::EpochLogs&) override { out.push_back(sgemm_gflops(n, threads)); }
    } between(blas, n, threads);

    std::unique_ptr<nn::Model> model;
    const Shape images{ds.train.rows, ds.train.cols, 1};
    if (vm.count("model")) {
      const std::string file = vm["model"].as<std::string>();
      nn::KerasModel k = nn::model_from_keras_json(
          io::read_regular_file(file, limits::kMaxModelJsonBytes, "--model file"), file);
      if (k.input_shape != images)
        throw UsageError(file + ": the model's input is " + shape_string(k.input_shape) + ", the data's images " +
                         shape_string(images));
      model = std::move(k.model);
    } else {
      model = nn::make_cnn(10);
    }
    model->build(images, dev, 42);
    model->compile();
    const double flops = static_cast<double>(model->training_flops_per_sample());

    // Warm-up: the first steps allocate each batch size's buffers.
    nn::FitOptions warm;
    warm.batch_size = batch;
    warm.steps_per_epoch = 5;
    model->fit(ds.train, warm);

    std::printf("model                  %s\n", vm.count("model") ? vm["model"].as<std::string>().c_str() : "the trainer's CNN");
    std::printf("device                 %s (%s)\n", dev.name().c_str(), dev.props().name);
    nn::FitOptions fit;
    fit.batch_size = batch;
    fit.epochs = std::max(1, vm["epochs"].as<int>());
    fit.callbacks.push_back(&between);
    const nn::History h = model->fit(ds.train, fit);
    nn::EpochLogs e = h.epochs.front();
    for (size_t i = 0; i < h.epochs.size(); ++i) {
      const nn::EpochLogs& x = h.epochs[i];
      const double around = std::max(blas[i], blas[i + 1]);
      const double x_gflops = static_cast<double>(x.samples) / x.seconds * flops / 1e9;
      std::printf("epoch %d                %.2f s, %.0f samples/s, %.1f GFLOP/s", x.epoch, x.seconds,
                  static_cast<double>(x.samples) / x.seconds, x_gflops);
      if (around > 0) std::printf("; sgemm before %.1f, after %.1f: %.1f%%", blas[i], blas[i + 1], 100 * x_gflops / around);
      std::printf("\n");
      if (x.seconds < e.seconds) e = x;
    }
    const double best_blas = *std::max_element(blas.begin(), blas.end());
    const double sps = static_cast<double>(e.samples) / e.seconds;
    const double gflops = sps * flops / 1e9;

    std::printf("fastest epoch          %lld samples, batch %lld, %.2f s (%.2f ms/step)\n",
                static_cast<long long>(e.samples), static_cast<long long>(batch), e.seconds,
                1e3 * e.seconds / static_cast<double>(e.steps));
    std::printf("samples/s              %.0f\n", sps);
    std::printf("effective GFLOP/s      %.2f (%.2f MFLOP per training sample)\n", gflops, flops / 1e6);
    if (best_blas > 0) {
      std::printf("OpenBLAS sgemm GFLOP/s %.2f (n = %d, the best of %zu figures taken before and between the epochs, "
                  "each the best call in 1 s, loaded as the CPU plugin loads it)\n", best_blas, n, blas.size());
      std::printf("ratio                  %.1f%% of the sgemm rate%s\n", 100 * gflops / best_blas,
                  vm.count("model") ? "" : " (the CNN's goal: 85%)");
    } else {
      std::printf("OpenBLAS sgemm GFLOP/s not measured (--sgemm-size 0, or bench/kernels' axon_bench_sgemm is not in "
                  "this build)\n");
    }
    std::printf("waiting for input      %.3f s (%.2f%% of the epoch)\n", e.input_wait_seconds,
                100 * e.input_wait_seconds / e.seconds);

    // Where the time goes: op profiling synchronises after every op, so the
    // sum of op times against the wall time shows the trainer's own overhead.
    const int64_t steps = vm["profile-steps"].as<int64_t>();
    if (steps <= 0) return 0;
    // The memory roof is taken before the profiled steps and again after
    // them, and the faster figures kept, as the sgemm rate is the best of
    // several: a neighbour busy with memory during one measurement would
    // otherwise lower the roof and flatter every memory-bound op.
    const int64_t stream_bytes = vm["stream-mib"].as<int64_t>() << 20;
    const bench::StreamRates stream_before =
        best_blas > 0 ? bench::stream_rates(threads, stream_bytes, 1.0) : bench::StreamRates{};
    nn::FitOptions prof;
    prof.batch_size = batch;
    prof.steps_per_epoch = steps;
    reset_op_times();
    set_op_profiling(true);
    const double t0 = now_s();
    const nn::History ph = model->fit(ds.train, prof);
    const double wall = now_s() - t0;
    set_op_profiling(false);
    double ops_total = 0;
    for (const OpTime& t : op_times()) ops_total += t.seconds;
    std::printf("\nper op over %lld profiled steps (%.3f s wall, %.3f s in ops, %.1f%% outside ops):\n",
                static_cast<long long>(ph.epochs.front().steps), wall, ops_total,
                100 * (wall - ops_total) / wall);
    std::printf("  %-38s %8s %10s %10s %7s\n", "op", "calls", "seconds", "ms/call", "share");
    for (const OpTime& t : op_times())
      std::printf("  %-38s %8lld %10.3f %10.3f %6.1f%%\n", t.op.c_str(), static_cast<long long>(t.calls), t.seconds,
                  1e3 * t.seconds / static_cast<double>(t.calls), 100 * t.seconds / ops_total);

    // The roofline: each op's FLOPs and bytes against the sgemm rate, a
    // STREAM bandwidth on the threads the ops ran on (the faster of before
    // and now), and the least time of a call (measured last: it resets the
    // op times).
    if (best_blas <= 0) {
      std::printf("\nno roofline: the sgemm rate was not measured\n");
      return 0;
    }
    const std::vector<OpTime> profiled = op_times_by_layer();
    const bench::StreamRates stream_after = bench::stream_rates(threads, stream_bytes, 1.0);
    bench::StreamRates stream = stream_after;
    stream.copy_gbs = std::max(stream_before.copy_gbs, stream_after.copy_gbs);
    stream.triad_gbs = std::max(stream_before.triad_gbs, stream_after.triad_gbs);
    const double floor_s = bench::call_floor_seconds(dev);
    const bench::ColdCalls cold = bench::cold_call_seconds(dev);
    const bench::Roofs roofs{best_blas, std::max(stream.copy_gbs, stream.triad_gbs), floor_s};
    std::printf("\nroofline over the profiled steps: sgemm %.2f GFLOP/s (the best above); STREAM copy %.2f GB/s, "
                "triad %.2f GB/s\n(the faster of the figures before and after the profiled steps: copy %.2f and %.2f, "
                "triad %.2f and %.2f;\n%d threads, arrays of %lld MiB, last-level cache %lld KiB); memory roof %.2f GB/s "
                "(the faster); balance %.2f FLOP/B\n"
                "call floor %.2f us (a Scale of one float, timed as the ops are: the fastest of 5 rounds of 2000 calls); "
                "cold, after a sweep of twice the last-level cache (medians of 20 calls): that Scale %.2f us, the loss "
                "of 64 x 10 logits %.2f us\n",
                best_blas, stream.copy_gbs, stream.triad_gbs, stream_before.copy_gbs, stream_after.copy_gbs,
                stream_before.triad_gbs, stream_after.triad_gbs, stream.threads,
                static_cast<long long>(stream.array_bytes >> 20),
                static_cast<long long>(bench::last_level_cache_bytes() >> 10), roofs.bandwidth_gbs, roofs.balance(),
                1e6 * floor_s, 1e6 * cold.scale_seconds, 1e6 * cold.loss_seconds);
    const std::vector<bench::RooflineRow> rows = bench::roofline_rows(profiled, roofs);
    bench::print_roofline(rows, roofs);
    if (vm.count("roofline-layers")) {
      std::printf("\nper op and layer:\n");
      bench::print_roofline(bench::roofline_layer_rows(profiled, roofs), roofs, /*legend=*/false);
    }
    double bound = 0;
    for (const bench::RooflineRow& r : rows) bound += r.bound_seconds;
    const double profiled_steps = static_cast<double>(ph.epochs.front().steps);
    const double step_ms = 1e3 * e.seconds / static_cast<double>(e.steps);
    const double bound_ms = 1e3 * bound / profiled_steps;
    std::printf("this step could take %.2f ms at the bounds; it takes %.2f ms (%.1f%%) in the fastest epoch, "
                "%.2f ms in its ops under profiling\n",
                bound_ms, step_ms, 100 * bound_ms / step_ms, 1e3 * ops_total / profiled_steps);
    if (vm.count("roofline-svg")) {
      const std::string file = vm["roofline-svg"].as<std::string>();
      bench::write_roofline_svg(file, rows, roofs,
                                std::string("roofline of ") +
                                    (vm.count("model") ? vm["model"].as<std::string>() : "the trainer's CNN") +
                                    ", batch " + std::to_string(batch) + ", " + dev.name());
      std::printf("roofline plot          %s\n", file.c_str());
    }
    return 0;
  });
}
