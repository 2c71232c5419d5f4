// The CUDA kernel library's failure paths, on fake CUDA libraries
// (fake_cuda_libraries.hpp): its own sources (device, allocator, collectives,
// convolution and pooling) linked against stand-ins for cudart, cuDNN, cuBLAS
// and NCCL that fail where a test tells them to. These are the paths a real
// GPU run would meet only by bad luck: an NCCL set-up or call that fails, an
// all-reduce that never finishes, cuDNN refusing an engine or wanting more
// workspace than a memory limit leaves, a layout without engines, tensors
// beyond cuDNN's 2^31 elements. Driven through the library's own table
// (axon_cuda_kernels_init), as the plugin drives it. One process per case
// (ctest runs each tag alone): NCCL communicators live for the process.
#include "fake_cuda_libraries.hpp"
#include "fake_device.hpp"

#include "cuda_device.hpp"

#include <catch2/catch.hpp>

#include <axon/op_geometry.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

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
using namespace axon::fake_device;
namespace fake = axon::fake;

Result all_reduce(std::vector<Device*> devs, std::vector<std::vector<float>*> bufs) {
  std::vector<void*> ctxs, ptrs;
  for (size_t i = 0; i < devs.size(); ++i) ctxs.push_back(devs[i]->api.device_ctx), ptrs.push_back(bufs[i]->data());
  axon_error err{};
  const axon_status s =
      kernels().collectives->all_reduce(nullptr, static_cast<int32_t>(devs.size()), ctxs.data(), ptrs.data(),
                                        static_cast<int64_t>(bufs[0]->size()), AXON_FLOAT32, AXON_REDUCE_SUM, &err);
  return result(s, err);
}

bool all_equal(const std::vector<float>& v, float value) {
  for (float x : v)
    if (x != value) return false;
  return true;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// A convolution with TensorFlow's NHWC/HWIO semantics, its three ops run on
// a device and checked against a naive loop here.
struct ConvCase {
  axon_conv2d_attrs attrs{};
  Tensor x, f, dy;
  axon::ConvGeometry g;
  bool depthwise;  // filter [KH, KW, C, M], y channels c * M + m

  ConvCase(std::vector<int64_t> xs, std::vector<int64_t> fs, int stride, axon_padding padding, bool dw = false)
      : x(xs, 0.25f), f(fs, 0.5f), dy({0}), depthwise(dw) {
    attrs.struct_size = sizeof attrs;
    attrs.stride_h = attrs.stride_w = stride;
    attrs.dilation_h = attrs.dilation_w = 1;
    attrs.padding = padding;
    g = axon::conv_geometry(attrs, xs.data(), fs.data());
    dy = Tensor({g.n, g.oh, g.ow, depthwise ? g.c * g.oc : g.oc}, 0.125f);
  }
  // Calls f(x index, filter index, y index) for every product of the convolution.
  template <class F>
  void each_product(F fn) const {
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t oh = 0; oh < g.oh; ++oh)
        for (int64_t ow = 0; ow < g.ow; ++ow)
          for (int64_t r = 0; r < g.kh; ++r)
            for (int64_t s = 0; s < g.kw; ++s) {
              const int64_t ih = oh * g.sh - g.pad_h + r * g.dh, iw = ow * g.sw - g.pad_w + s * g.dw;
              if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
              for (int64_t c = 0; c < g.c; ++c)
                for (int64_t k = 0; k < g.oc; ++k) {
                  const int64_t yc = depthwise ? c * g.oc + k : k, ys = depthwise ? g.c * g.oc : g.oc;
                  fn(((n * g.h + ih) * g.w + iw) * g.c + c, ((r * g.kw + s) * g.c + c) * g.oc + k,
                     ((n * g.oh + oh) * g.ow + ow) * ys + yc);
                }
            }
  }
  // Runs `op` on d and compares with the loop; "" when equal within 1e-5.
  // Depthwise ops are named by their plain counterparts here.
  std::string check(Device& d, const char* plain) {
    const std::string name = plain;
    const std::string depthwise_op = name == "Conv2D"                ? "DepthwiseConv2dNative"
                                     : name == "Conv2DBackpropInput" ? "DepthwiseConv2dNativeBackpropInput"
                                                                     : "DepthwiseConv2dNativeBackpropFilter";
    const char* op = depthwise ? depthwise_op.c_str() : plain;
    Tensor out(name == "Conv2D" ? dy.dims : name == "Conv2DBackpropInput" ? x.dims : f.dims);
    std::vector<double> want(out.data.size(), 0.0);
    each_product([&](int64_t xi, int64_t fi, int64_t yi) {
      if (name == "Conv2D") want[yi] += double(x.data[xi]) * f.data[fi];
      if (name == "Conv2DBackpropInput") want[xi] += double(dy.data[yi]) * f.data[fi];
      if (name == "Conv2DBackpropFilter") want[fi] += double(x.data[xi]) * dy.data[yi];
    });
    const Result r = name == "Conv2D"                ? run(d, op, {&x, &f}, {&out}, &attrs)
                     : name == "Conv2DBackpropInput" ? run(d, op, {&dy, &f}, {&out}, &attrs)
                                                     : run(d, op, {&x, &dy}, {&out}, &attrs);
    if (r.status != AXON_OK) return std::string(op) + " failed: " + r.message;
    for (size_t i = 0; i < want.size(); ++i)
      if (!(std::fabs(out.data[i] - want[i]) <= 1e-5 * (1 + std::fabs(want[i]))))
        return std::string(op) + ": element " + std::to_string(i) + " is " + std::to_string(out.data[i]) + ", want " +
               std::to_string(want[i]);
    return "";
  }
};

constexpr const char* kConvOps[] = {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"};

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
    CHECK_THAT(later.message,
               Contains("GPUs 0, 1") && Contains("could not be set up") && Contains("no path between GPU 0 and GPU 1"));
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

TEST_CASE("an asynchronous NCCL error of an in-process all-reduce ends synchronize() naming the all-reduce",
          "[nccl-async]") {
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
                             Contains("remote process exited or there was a network error") && Contains("aborted"));
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

TEST_CASE("an event after a hung all-reduce is not reached; waiting for it reports the all-reduce's error",
          "[events]") {
  fake::reset();
  Device d0(0), d1(1);
  const axon_device_api& api = d0.api;
  REQUIRE(api.event_create != nullptr);
  axon_error err{};
  axon_event e = nullptr;
  REQUIRE(api.event_create(api.device_ctx, &e, &err) == AXON_OK);
  int32_t done = -1;
  REQUIRE(api.event_query(api.device_ctx, e, &done, &err) == AXON_OK);
  CHECK(done == 1);  // never recorded
  std::vector<float> a(1000, 1.f), b(1000, 2.f);
  fake::script().hang_collectives = true;
  REQUIRE(all_reduce({&d0, &d1}, {&a, &b}).status == AXON_OK);  // queued, never finishing
  REQUIRE(api.event_record(api.device_ctx, e, nullptr, &err) == AXON_OK);
  REQUIRE(api.event_wait(api.device_ctx, e, nullptr, &err) == AXON_OK);
  REQUIRE(api.event_query(api.device_ctx, e, &done, &err) == AXON_OK);
  CHECK(done == 0);
  fake::script().hang_async_error = ncclRemoteError;
  const auto t0 = Clock::now();
  const Result r = result(api.event_synchronize(api.device_ctx, e, &err), err);
  CHECK(seconds_since(t0) < 5);
  CHECK(r.status == AXON_INTERNAL);
  CHECK_THAT(r.message, Contains("NCCL all-reduce of 1000 float32 values over GPUs 0, 1") && Contains("aborted"));
  api.event_destroy(api.device_ctx, e);
}

TEST_CASE("queued all-reduces run beside the device's stream: their done events carry their results and errors",
          "[nccl-queued]") {
  fake::reset();
  const axon_collective_api& c = *kernels().collectives;
  REQUIRE(c.all_reduce_async != nullptr);
  REQUIRE(c.comm_all_reduce_async != nullptr);
  Device d0(0), d1(1);
  auto event = [](Device& d) {
    axon_event e = nullptr;
    axon_error err{};
    REQUIRE(d.api.event_create(d.api.device_ctx, &e, &err) == AXON_OK);
    return e;
  };
  auto reached = [](Device& d, axon_event e) {
    int32_t done = -1;
    axon_error err{};
    REQUIRE(d.api.event_query(d.api.device_ctx, e, &done, &err) == AXON_OK);
    return done == 1;
  };
  axon_error err{};
  // In-process: the sum lands, each device's done event is reached.
  std::vector<float> a(1000, 1.f), b(1000, 2.f);
  void* ctxs[] = {d0.api.device_ctx, d1.api.device_ctx};
  void* bufs[] = {a.data(), b.data()};
  axon_event ready[] = {event(d0), event(d1)}, done[] = {event(d0), event(d1)};
  REQUIRE(d0.api.event_record(d0.api.device_ctx, ready[0], nullptr, &err) == AXON_OK);
  REQUIRE(d1.api.event_record(d1.api.device_ctx, ready[1], nullptr, &err) == AXON_OK);
  REQUIRE(c.all_reduce_async(nullptr, 2, ctxs, bufs, 1000, AXON_FLOAT32, AXON_REDUCE_SUM, ready, done, &err) ==
          AXON_OK);
  CHECK(d0.api.event_synchronize(d0.api.device_ctx, done[0], &err) == AXON_OK);
  CHECK(all_equal(a, 3.f));
  CHECK(all_equal(b, 3.f));
  CHECK(c.all_reduce_async(nullptr, 2, ctxs, bufs, 1000, AXON_FLOAT32, AXON_REDUCE_SUM, ready, nullptr, &err) ==
        AXON_INVALID_ARGUMENT);

  // A hung one: its done event is not reached while the device's own stream
  // is free; waiting for the event reports the all-reduce's error.
  fake::script().hang_collectives = true;
  REQUIRE(c.all_reduce_async(nullptr, 2, ctxs, bufs, 1000, AXON_FLOAT32, AXON_REDUCE_SUM, nullptr, done, &err) ==
          AXON_OK);
  axon_event compute = event(d0);
  REQUIRE(d0.api.event_record(d0.api.device_ctx, compute, nullptr, &err) == AXON_OK);
  CHECK(reached(d0, compute));
  CHECK_FALSE(reached(d0, done[0]));
  fake::script().hang_async_error = ncclRemoteError;
  const auto t0 = Clock::now();
  Result r = result(d0.api.event_synchronize(d0.api.device_ctx, done[0], &err), err);
  CHECK(seconds_since(t0) < 5);
  CHECK(r.status == AXON_INTERNAL);
  CHECK_THAT(r.message, Contains("NCCL all-reduce of 1000 float32 values over GPUs 0, 1") && Contains("aborted"));

  // Cross-process, with a timeout: reported through the done event, naming the rank.
  fake::reset();
  fake::script().hang_collectives = true;
  Device d2(0);
  char id[AXON_COMM_ID_CAPACITY];
  size_t id_size = sizeof id;
  REQUIRE(c.comm_get_id(nullptr, id, &id_size, &err) == AXON_OK);
  void* comm = nullptr;
  REQUIRE(c.comm_create(d2.api.device_ctx, id, id_size, 0, 1, &comm, &err) == AXON_OK);
  axon_event rank_done = event(d2);
  std::vector<float> buf(500, 1.f);
  REQUIRE(c.comm_all_reduce_async(comm, buf.data(), 500, AXON_FLOAT32, AXON_REDUCE_SUM, nullptr, rank_done, 200,
                                  &err) == AXON_OK);
  CHECK_FALSE(reached(d2, rank_done));
  r = result(d2.api.event_synchronize(d2.api.device_ctx, rank_done, &err), err);
  CHECK(r.status == AXON_DEADLINE_EXCEEDED);
  CHECK_THAT(r.message, Contains("NCCL all-reduce of 500 float32 values (timeout 200 ms)") && Contains("rank 0 of 1"));
  c.comm_destroy(comm);
  for (axon_event e : {ready[0], done[0], compute}) d0.api.event_destroy(d0.api.device_ctx, e);
  for (axon_event e : {ready[1], done[1]}) d1.api.event_destroy(d1.api.device_ctx, e);
  d2.api.event_destroy(d2.api.device_ctx, rank_done);
}

TEST_CASE(
    "a cross-process all-reduce that never finishes fails at its timeout naming it, and its error without one at "
    "synchronize()",
    "[nccl-comm]") {
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
  CHECK_THAT(r.message,
             Contains("NCCL all-reduce of 1000 float32 values") && Contains("rank 0 of 1") && Contains("aborted"));
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

  // An all-reduce whose communicator is destroyed before the device waits
  // (destroying flushes it) leaves nothing to report.
  fake::script().hang_collectives = false;
  void* finished = create(d0);
  r = result(c.comm_all_reduce(finished, buf.data(), 1000, AXON_FLOAT32, AXON_REDUCE_SUM, 0, &err), err);
  CHECK(r.status == AXON_OK);
  c.comm_destroy(finished);
  CHECK(d0.synchronize().message == "");
}

TEST_CASE("cuDNN engines the policy forbids or that make no plan are skipped; the fallback list comes after",
          "[cudnn-candidates]") {
  fake::reset();
  // Eight engines the math policy drops (float32 converted down), one with
  // tensor cores while TF32 is off, one whose plan cuDNN will not make: the
  // next one runs.
  for (int algo = 0; algo < 8; ++algo)
    fake::script().nhwc_offers.push_back(
        {.algo = algo, .notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE, CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS}});
  fake::script().nhwc_offers.push_back({.algo = 11, .notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}});
  fake::script().nhwc_offers.push_back({.algo = 12, .plan = CUDNN_STATUS_NOT_SUPPORTED});
  fake::script().nhwc_offers.push_back({.algo = 15, .notes = {CUDNN_NUMERICAL_NOTE_WINOGRAD}, .workspace = 4096});
  fake::script().nhwc_offers.push_back({.algo = 16});
  Device d(0);
  ConvCase c({2, 6, 5, 3}, {3, 2, 3, 4}, 1, AXON_PADDING_VALID);
  for (const char* op : kConvOps) CHECK(c.check(d, op) == "");
  CHECK(fake::record().conv_runs == std::vector<std::string>{"forward engine 15 NHWC workspace 4096",
                                                             "backward-data engine 15 NHWC workspace 4096",
                                                             "backward-filter engine 15 NHWC workspace 4096"});
  // With TF32 allowed, the tensor-core engine comes first.
  fake::reset();
  fake::script().nhwc_offers = {{.algo = 11, .notes = {CUDNN_NUMERICAL_NOTE_TENSOR_CORE}}, {.algo = 16}};
  Device tf32(1, AXON_MEMORY_GROWTH, 0, /*allow_tf32=*/true);
  CHECK(c.check(tf32, "Conv2D") == "");
  CHECK(fake::record().conv_runs == std::vector<std::string>{"forward engine 11 NHWC workspace 0"});
  // Where the heuristics' first list has nothing usable, their fallback list is asked.
  fake::reset();
  fake::script().nhwc_offers = {{.algo = 3, .plan = CUDNN_STATUS_NOT_SUPPORTED}, {.algo = 40, .fallback = true}};
  Device fallback(2);
  CHECK(c.check(fallback, "Conv2D") == "");
  CHECK(fake::record().conv_runs == std::vector<std::string>{"forward engine 40 NHWC workspace 0"});
}

TEST_CASE("a workspace that does not fit under the memory limit moves to the next candidate needing less",
          "[cudnn-workspace]") {
  fake::reset();
  fake::script().nhwc_offers = {{.algo = 0, .workspace = 512u << 20}, {.algo = 1, .workspace = 1u << 20}};
  Device d(0, AXON_MEMORY_LIMIT, 64u << 20);
  ConvCase c({2, 6, 5, 3}, {3, 3, 3, 4}, 1, AXON_PADDING_SAME);
  CHECK(c.check(d, "Conv2D") == "");
  CHECK(c.check(d, "Conv2D") == "");  // the choice is kept
  CHECK(fake::record().conv_runs ==
        std::vector<std::string>{"forward engine 1 NHWC workspace 1048576", "forward engine 1 NHWC workspace 1048576"});
  CHECK(logged("no room for the 536870912-byte workspace of forward engine 0; using engine 1") == 1);
  // When nothing smaller is left, the out-of-memory error names the op.
  fake::script().nhwc_offers = {{.algo = 0, .workspace = 512u << 20}, {.algo = 3, .workspace = 768u << 20}};
  const std::string failed = c.check(d, "Conv2DBackpropFilter");
  CHECK_THAT(failed, Contains("Conv2DBackpropFilter: no backward-filter engine fits") && Contains("out of memory") &&
                         Contains("memory mode limit"));
}

TEST_CASE("a shape with no usable NHWC engine runs in NCHW through transposes, said once per shape",
          "[cudnn-nchw]") {
  fake::reset();
  fake::script().nhwc_offers = {{.algo = 0, .plan = CUDNN_STATUS_NOT_SUPPORTED},
                                {.algo = 1, .plan = CUDNN_STATUS_NOT_SUPPORTED}};
  fake::script().nchw_offers = {{.algo = 1, .workspace = 256}};
  Device d(0);
  // Stride 2 and an even filter: SAME pads one more row and column after.
  ConvCase c({2, 7, 6, 3}, {2, 4, 3, 5}, 2, AXON_PADDING_SAME);
  REQUIRE(c.g.pad_h_total == 1);
  REQUIRE(c.g.pad_w_total == 2);
  for (int round = 0; round < 2; ++round)
    for (const char* op : kConvOps) CHECK(c.check(d, op) == "");
  CHECK(fake::record().conv_runs ==
        std::vector<std::string>{"forward engine 1 NCHW workspace 256", "backward-data engine 1 NCHW workspace 256",
                                 "backward-filter engine 1 NCHW workspace 256", "forward engine 1 NCHW workspace 256",
                                 "backward-data engine 1 NCHW workspace 256",
                                 "backward-filter engine 1 NCHW workspace 256"});
  for (const char* kind : {"forward", "backward-data", "backward-filter"})
    CHECK(logged(std::string("cuDNN has no usable NHWC ") + kind + " engine for N=2 H=8 W=6 C=3 K=5 R=2 S=4, stride 2x2") ==
          1);
  // With neither layout, the error says so.
  fake::script().nchw_offers.clear();
  ConvCase other({1, 5, 5, 2}, {3, 3, 2, 2}, 1, AXON_PADDING_VALID);
  CHECK_THAT(
      other.check(d, "Conv2D"),
      Contains("Conv2D: cuDNN offers no usable forward engine, in NHWC or NCHW, for N=1 H=5 W=5 C=2 K=2 R=3 S=3"));
}

TEST_CASE("tensors beyond cuDNN's 2^31 - 1 elements fail with one message naming the op and shape, or are cut up",
          "[cudnn-size]") {
  fake::reset();
  Device d(0);
  axon_conv2d_attrs conv{};
  conv.struct_size = sizeof conv;
  conv.stride_h = conv.stride_w = conv.dilation_h = conv.dilation_w = 1;
  conv.padding = AXON_PADDING_VALID;
  const axon_tensor x = huge({70000, 180, 180, 1}, 0x1000), f = huge({3, 3, 1, 1}, 0x2000),
                    y = huge({70000, 178, 178, 1}, 0x3000);
  for (auto [op, in, out] :
       {std::tuple{"Conv2D", std::vector{x, f}, y}, std::tuple{"Conv2DBackpropInput", std::vector{y, f}, x},
        std::tuple{"Conv2DBackpropFilter", std::vector{x, y}, f}}) {
    const Result r = run(d, op, in, {out}, &conv);
    CHECK(r.status == AXON_INVALID_ARGUMENT);
    CHECK_THAT(r.message,
               Contains(std::string(op) + ": the image [70000,180,180,1] has 2268000000 elements; cuDNN takes at "
                                          "most 2^31 - 1 (2147483647) per tensor"));
  }
  axon_pool_attrs pool{};
  pool.struct_size = sizeof pool;
  pool.window_h = pool.window_w = pool.stride_h = pool.stride_w = 2;
  pool.padding = AXON_PADDING_SAME;
  const Result r = run(d, "MaxPool", {huge({70000, 181, 180, 1}, 0x1000)}, {huge({70000, 91, 90, 1}, 0x3000)}, &pool);
  CHECK(r.status == AXON_INVALID_ARGUMENT);
  CHECK_THAT(r.message,
             Contains("MaxPool: the input (with SAME's -inf border) [70000,182,180,1] has 2293200000 elements"));
  CHECK(fake::record().conv_runs.empty());

  // Elementwise activations are handed to cuDNN in pieces.
  fake::script().record_only = true;
  const int64_t n = (int64_t{1} << 31) + 5;
  REQUIRE(run(d, "Relu", {huge({n}, 0x10000000)}, {huge({n}, 0x20000000)}, nullptr).status == AXON_OK);
  REQUIRE(run(d, "ReluGrad", {huge({n}, 0x30000000), huge({n}, 0x10000000)}, {huge({n}, 0x40000000)}, nullptr).status ==
          AXON_OK);
  const auto& calls = fake::record().activations;
  REQUIRE(calls.size() == 6);
  const int64_t chunk = int64_t{1} << 30;
  for (size_t i = 0; i < 6; ++i) {
    const int64_t at = static_cast<int64_t>(i % 3) * chunk;
    CHECK(calls[i].count == (i % 3 == 2 ? 5 : chunk));
    CHECK(calls[i].x == reinterpret_cast<const char*>(0x10000000) + at * 4);
    CHECK(calls[i].y == reinterpret_cast<char*>(i < 3 ? 0x20000000 : 0x40000000) + at * 4);
  }
}

TEST_CASE("depthwise convolutions are cuDNN's grouped ones, in NHWC and through the NCHW fallback",
          "[cudnn-depthwise]") {
  fake::reset();
  fake::script().nhwc_offers = {{.algo = 2, .workspace = 64}};
  Device d(0);
  ConvCase c({2, 7, 6, 3}, {3, 2, 3, 2}, 2, AXON_PADDING_SAME, /*depthwise=*/true);
  for (const char* op : kConvOps) CHECK(c.check(d, op) == "");
  CHECK(fake::record().conv_runs == std::vector<std::string>{"forward engine 2 NHWC workspace 64",
                                                             "backward-data engine 2 NHWC workspace 64",
                                                             "backward-filter engine 2 NHWC workspace 64"});
  fake::script().nhwc_offers.clear();
  fake::script().nchw_offers = {{.algo = 4}};
  ConvCase other({1, 5, 4, 4}, {3, 3, 4, 3}, 1, AXON_PADDING_VALID, /*depthwise=*/true);
  for (const char* op : kConvOps) CHECK(other.check(d, op) == "");
  CHECK(logged("cuDNN has no usable NHWC forward engine for N=1 H=5 W=4 C=4 K=12 R=3 S=3, stride 1x1, dilation 1x1, "
               "4 groups") == 1);
}
