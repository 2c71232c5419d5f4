// The CUDA kernel library's failure paths, on fake CUDA libraries
// (fake_cuda_libraries.hpp): its own sources (device, allocator, collectives,
// convolution and pooling) linked against stand-ins for cudart, cuDNN, cuBLAS
// and NCCL that fail where a test tells them to. These are the paths a real
// GPU run would meet only by bad luck: an NCCL set-up or call that fails, an
// all-reduce that never finishes, cuDNN refusing an algorithm or wanting more
// workspace than a memory limit leaves, a layout without algorithms, tensors
// beyond cuDNN's 2^31 elements. Driven through the library's own table
// (axon_cuda_kernels_init), as the plugin drives it. One process per case
// (ctest runs each tag alone): NCCL communicators live for the process.
#include "fake_cuda_libraries.hpp"

#include "axon_cuda_kernels.h"
#include "cuda_device.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" axon_status axon_cuda_kernels_init(uint32_t version, axon_cuda_kernels_api* out, axon_error* err);

namespace axon::cuda {

// The kernel areas linked into this test, in place of kernel_table.cpp.
const sdk::KernelTable& kernel_table() {
  static const sdk::KernelTable table = [] {
    sdk::KernelTable t;
    register_conv_kernels(t);
    register_pool_activation_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace axon::cuda

namespace {

using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;
namespace fake = axon::fake;

std::mutex log_mu;
std::vector<std::string> log_lines;

void capture_log(void*, axon_log_level, const char*, const char* message) {
  std::lock_guard<std::mutex> lock(log_mu);
  log_lines.emplace_back(message);
}

int logged(const std::string& part) {
  std::lock_guard<std::mutex> lock(log_mu);
  int n = 0;
  for (const auto& l : log_lines) n += l.find(part) != std::string::npos;
  return n;
}

const axon_host_api& host() {
  static const axon_host_api h = [] {
    axon_host_api a{};
    a.struct_size = sizeof a;
    a.abi_major = AXON_ABI_MAJOR;
    a.abi_minor = AXON_ABI_MINOR;
    a.log = capture_log;
    return a;
  }();
  return h;
}

const axon_cuda_kernels_api& kernels() {
  static const axon_cuda_kernels_api api = [] {
    axon_cuda_kernels_api a{};
    axon_error err{};
    if (axon_cuda_kernels_init(AXON_CUDA_KERNELS_VERSION, &a, &err) != AXON_OK) FAIL(err.message);
    return a;
  }();
  return api;
}

struct Result {
  axon_status status = AXON_OK;
  std::string message;
};

Result result(axon_status s, const axon_error& err) { return {s, s == AXON_OK ? "" : err.message}; }

// One device of the fake runtime, opened as the plugin opens it.
struct Device {
  axon_device_api api{};
  std::string label;

  explicit Device(int ordinal, axon_memory_mode mode = AXON_MEMORY_GROWTH, uint64_t limit = 0)
      : label("/device:GPU:" + std::to_string(ordinal)) {
    axon_cuda_open_args args{};
    args.struct_size = sizeof args;
    args.host = &host();
    args.plugin_name = "cuda";
    args.cuda_ordinal = ordinal;
    args.label = label.c_str();
    args.config.struct_size = sizeof args.config;
    args.config.memory_mode = mode;
    args.config.memory_limit_bytes = limit;
    api.struct_size = sizeof api;
    axon_error err{};
    const axon_status s = kernels().open_device(&args, &api, &err);
    if (s != AXON_OK) FAIL(err.message);
  }
  ~Device() { api.close(api.device_ctx); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Result synchronize() {
    axon_error err{};
    return result(api.synchronize(api.device_ctx, &err), err);
  }
};

Result all_reduce(std::vector<Device*> devs, std::vector<std::vector<float>*> bufs) {
  std::vector<void*> ctxs, ptrs;
  for (size_t i = 0; i < devs.size(); ++i) ctxs.push_back(devs[i]->api.device_ctx), ptrs.push_back(bufs[i]->data());
  axon_error err{};
  const axon_status s = kernels().collectives->all_reduce(nullptr, static_cast<int32_t>(devs.size()), ctxs.data(),
                                                          ptrs.data(), static_cast<int64_t>(bufs[0]->size()), AXON_FLOAT32,
                                                          AXON_REDUCE_SUM, &err);
  return result(s, err);
}

bool all_equal(const std::vector<float>& v, float value) {
  for (float x : v)
    if (x != value) return false;
  return true;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TEST_CASE("an NCCL set-up that failed is what every later all-reduce over those GPUs reports", "[nccl-init]") {
  fake::reset();
  fake::script().init_all_result = ncclSystemError;
  fake::script().nccl_last_error = "fake NCCL: no path between GPU 0 and GPU 1";
  Device d0(0), d1(1), d2(2), d3(3);
  std::vector<float> a(1000, 1.f), b(1000, 2.f);
  const Result first = all_reduce({&d0, &d1}, {&a, &b});
  CHECK(first.status == AXON_INTERNAL);
  CHECK_THAT(first.message, Contains("ncclCommInitAll") && Contains("unhandled system error") &&
                                Contains("no path between GPU 0 and GPU 1"));
  // Later calls name the set-up's cause, never the "invalid argument" of
  // communicators that were never made, and do not try again.
  fake::script().init_all_result = ncclSuccess;
  for (int step = 0; step < 2; ++step) {
    const Result later = all_reduce({&d0, &d1}, {&a, &b});
    CHECK(later.status == AXON_UNAVAILABLE);
    CHECK_THAT(later.message, Contains("GPUs 0, 1") && Contains("could not be set up") &&
                                  Contains("no path between GPU 0 and GPU 1"));
    CHECK_THAT(later.message, !Contains("invalid argument"));
  }
  CHECK(fake::record().init_all_calls == 1);
  CHECK(all_equal(a, 1.f));
  CHECK(all_equal(b, 2.f));
  // Another set of GPUs sets up its own communicators and sums.
  std::vector<float> c(1000, 3.f), d(1000, 4.f);
  CHECK(all_reduce({&d2, &d3}, {&c, &d}).status == AXON_OK);
  CHECK(all_equal(c, 7.f));
  CHECK(all_equal(d, 7.f));
}

TEST_CASE("an all-reduce that fails inside NCCL's group leaves no group open: the next one runs", "[nccl-group]") {
  fake::reset();
  Device d0(0), d1(1);
  std::vector<float> a(1000, 1.f), b(1000, 2.f);
  fake::script().fail_all_reduce_rank = 1;
  const Result failed = all_reduce({&d0, &d1}, {&a, &b});
  CHECK(failed.status == AXON_INTERNAL);
  CHECK_THAT(failed.message, Contains("ncclAllReduce") && Contains("all-reduce of rank 1 refused"));
  CHECK(fake::record().group_depth == 0);
  CHECK(fake::record().launched == 0);  // the group was discarded: rank 0 did not run alone
  CHECK(all_equal(a, 1.f));
  const Result next = all_reduce({&d0, &d1}, {&a, &b});
  CHECK(next.message == "");
  CHECK(next.status == AXON_OK);
  CHECK(fake::record().group_depth == 0);
  CHECK(fake::record().launched == 1);
  CHECK(all_equal(a, 3.f));
  CHECK(all_equal(b, 3.f));
}

TEST_CASE("an asynchronous NCCL error of an in-process all-reduce ends synchronize() naming the all-reduce", "[nccl-async]") {
  fake::reset();
  Device d0(0), d1(1);
  std::vector<float> a(1000, 1.f), b(1000, 2.f);
  fake::script().hang_collectives = true;
  fake::script().hang_async_error = ncclRemoteError;
  REQUIRE(all_reduce({&d0, &d1}, {&a, &b}).status == AXON_OK);  // queued
  const auto t0 = Clock::now();
  const Result s0 = d0.synchronize();
  CHECK(seconds_since(t0) < 5);
  CHECK(s0.status == AXON_INTERNAL);
  CHECK_THAT(s0.message, Contains("NCCL all-reduce of 1000 float32 values over GPUs 0, 1") &&
                             Contains("remote process exited or there was a network error") &&
                             Contains("aborted"));
  CHECK(fake::record().aborted == 2);  // both communicators of the set
  // The other device's part of that all-reduce failed with it.
  const Result s1 = d1.synchronize();
  CHECK(s1.status == AXON_INTERNAL);
  CHECK_THAT(s1.message, Contains("NCCL all-reduce of 1000 float32 values over GPUs 0, 1"));
  CHECK(d0.synchronize().status == AXON_OK);  // reported once
  const Result later = all_reduce({&d0, &d1}, {&a, &b});
  CHECK(later.status == AXON_UNAVAILABLE);
  CHECK_THAT(later.message, Contains("remote process exited or there was a network error"));
  CHECK(fake::record().aborted == 2);
}

TEST_CASE("a cross-process all-reduce that never finishes fails at its timeout naming it, and its error without one at "
          "synchronize()", "[nccl-comm]") {
  fake::reset();
  const axon_collective_api& c = *kernels().collectives;
  Device d0(0), d1(1);
  auto create = [&](Device& d) {
    char id[AXON_COMM_ID_CAPACITY];
    size_t id_size = sizeof id;
    axon_error err{};
    REQUIRE(c.comm_get_id(nullptr, id, &id_size, &err) == AXON_OK);
    void* comm = nullptr;
    REQUIRE(c.comm_create(d.api.device_ctx, id, id_size, 0, 1, &comm, &err) == AXON_OK);
    return comm;
  };
  std::vector<float> buf(1000, 1.f);
  fake::script().hang_collectives = true;

  void* stuck = create(d0);
  axon_error err{};
  auto t0 = Clock::now();
  Result r = result(c.comm_all_reduce(stuck, buf.data(), 1000, AXON_FLOAT32, AXON_REDUCE_SUM, 300, &err), err);
  const double waited = seconds_since(t0);
  CHECK(waited >= 0.3);
  CHECK(waited < 5);
  CHECK(r.status == AXON_DEADLINE_EXCEEDED);
  CHECK_THAT(r.message, Contains("NCCL all-reduce of 1000 float32 values") && Contains("rank 0 of 1") &&
                            Contains("aborted"));
  CHECK(fake::record().aborted == 1);
  r = result(c.comm_all_reduce(stuck, buf.data(), 1000, AXON_FLOAT32, AXON_REDUCE_SUM, 300, &err), err);
  CHECK(r.status == AXON_UNAVAILABLE);
  CHECK_THAT(r.message, Contains("aborted"));
  CHECK(d0.synchronize().status == AXON_OK);
  c.comm_destroy(stuck);

  // Without a timeout the all-reduce stays queued; its communicator's error
  // is what the device's next synchronize() reports.
  void* failing = create(d1);
  r = result(c.comm_all_reduce(failing, buf.data(), 1000, AXON_FLOAT32, AXON_REDUCE_SUM, 0, &err), err);
  CHECK(r.status == AXON_OK);
  fake::script().hang_async_error = ncclSystemError;  // the error comes after the call returned
  t0 = Clock::now();
  r = d1.synchronize();
  CHECK(seconds_since(t0) < 5);
  CHECK(r.status == AXON_INTERNAL);
  CHECK_THAT(r.message, Contains("NCCL all-reduce of 1000 float32 values") && Contains("rank 0 of 1") &&
                            Contains("unhandled system error"));
  CHECK(fake::record().aborted == 2);
  c.comm_destroy(failing);
  const int polls = fake::record().async_polls;
  CHECK(d1.synchronize().status == AXON_OK);
  CHECK(fake::record().async_polls == polls);  // nothing pending, nothing polled
}
