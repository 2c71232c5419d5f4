// All-reduce benchmark: the time of one sum of a gradient-sized float buffer
// over the replicas, as the strategies run it. Alone, over the logical CPU
// devices of --cpu-devices (the CPU plugin's in-process sum, mirrored's
// path); under mpirun, over the workers (multi-worker's path: MPI in rank
// order), with MPI's own MPI_Allreduce beside it for scale. Prints figures;
// never asserts speed.
#include <axon/cli.hpp>
#include <axon/runtime.hpp>
#include <axon/strategy.hpp>
#include <axon/workers.hpp>

#ifdef AXON_BENCH_HAVE_MPI
#include <mpi.h>
#endif

#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

namespace po = boost::program_options;
using namespace axon;

namespace {

using Clock = std::chrono::steady_clock;

struct Figures {
  double median_us = 0, best_us = 0;
};

// Times `iters` calls of f after `iters / 10 + 1` warm-up calls.
template <class F>
Figures time_calls(int iters, F&& f) {
  for (int i = 0; i < iters / 10 + 1; ++i) f();
  std::vector<double> us;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    f();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us.front()};
}

void report(const char* what, int64_t floats, int parties, const Figures& f) {
  // Bus bandwidth as NCCL's tests define it: 2 (n-1)/n x bytes / time.
  const double bytes = 4.0 * static_cast<double>(floats);
  const double bus = parties > 1 ? 2.0 * (parties - 1) / parties * bytes / (f.median_us * 1e-6) / 1e9 : 0;
  std::printf("%-44s %8d %12.1f %12.1f %10.2f\n", what, parties, f.median_us, f.best_us, bus);
}

}  // namespace

int main(int argc, char** argv) {
  return cli::run_main("axon-bench-allreduce", [&] {
    po::options_description opts("Usage: [mpirun -np N] axon-bench-allreduce [options]");
    opts.add_options()("help,h", "show this help")
      // The trainer's CNN: 93,322 parameters padded to 93,440, plus 2 metric sums, padded to 93,504.
      ("floats", po::value<int64_t>()->default_value(93504), "floats per all-reduce (default: the CNN's gradient buffer)")
      ("iters", po::value<int>()->default_value(500), "timed calls");
    cli::add_device_options(opts);
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, opts), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << opts;
      return 0;
    }
    const int64_t floats = vm["floats"].as<int64_t>();
    const int iters = vm["iters"].as<int>();
    if (floats < 1 || iters < 1) throw UsageError("--floats and --iters must be at least 1");

    std::unique_ptr<Workers> workers = Workers::join();
    Runtime& rt = Runtime::init(cli::make_config(vm));
    const std::vector<Device*> devices = mirrored_devices(rt);
    std::unique_ptr<Strategy> strategy =
        workers->launched() ? make_multi_worker_strategy(devices, *workers, 60) : make_mirrored_strategy(devices);
    std::vector<Tensor> buffers;
    std::vector<Tensor*> views;
    for (Device* d : devices) buffers.emplace_back(*d, AXON_FLOAT32, Shape{floats});
    for (Tensor& t : buffers) {
      std::vector<float> ones(static_cast<size_t>(floats), 1.0f);
      t.copy_from_host(ones.data(), ones.size() * sizeof(float));
      views.push_back(&t);
    }
    const bool chief = workers->rank() == 0;
    if (chief) {
      std::printf("all-reduce of %lld floats (%.1f KiB), %d timed calls\n", static_cast<long long>(floats),
                  4.0 * static_cast<double>(floats) / 1024, iters);
      std::printf("%-44s %8s %12s %12s %10s\n", "path", "replicas", "median us", "best us", "bus GB/s");
    }
    int64_t step = 0;
    const Figures ours = time_calls(iters, [&] { strategy->all_reduce(views, "benchmark buffer", ++step); });
    if (chief)
      report(workers->launched() ? "axon multi-worker (local sum + MPI, rank order)" : "axon mirrored (plugin's sum)",
             floats, strategy->num_replicas_in_sync(), ours);
#ifdef AXON_BENCH_HAVE_MPI
    if (workers->launched() && workers->size() > 1) {
      std::vector<float> host(static_cast<size_t>(floats), 1.0f);
      const Figures mpi = time_calls(iters, [&] {
        MPI_Allreduce(MPI_IN_PLACE, host.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      });
      if (chief) report("MPI_Allreduce (the library's order)", floats, workers->size(), mpi);
    }
#endif
    return 0;
  });
}
