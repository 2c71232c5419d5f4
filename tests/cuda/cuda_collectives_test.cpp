// NCCL collectives through the ABI on the devices this machine has: the
// in-process all_reduce over every visible GPU (SUM and MEAN, each from
// different values on every GPU, every GPU's buffer checked), and the
// queued form (all_reduce_async between events on each GPU's stream), the
// cross-process communicator path with a world of one (comm_get_id,
// comm_create, comm_all_reduce with a timeout, comm_all_reduce_async,
// comm_destroy), and a set-up
// that times out because its second rank never comes. With one GPU, the
// value checks are reported SKIP: a world of one cannot tell a reduction
// from doing nothing (NCCL takes each GPU once, so one GPU cannot be two
// ranks); the calls and their status are still checked.
//
//   cuda_collectives_test <libaxon-plugin-cuda.so>
//
// Exit: 0 pass, 1 fail (also: a GPU the plugin cannot use), 77 the driver
// reports no CUDA device. Plain C++ (no Catch2).
#include "device_presence.hpp"
#include "plugin_harness.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace axon::test;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <libaxon-plugin-cuda.so>\n", argv[0]);
    return 2;
  }
  try {
    LoadedPlugin cuda(argv[1]);
    if (auto code = exit_without_device(cuda, "CUDA device")) return *code;
    const int n = cuda.device_count();
    const axon_collective_api* coll = cuda.api.collectives;
    expect(coll != nullptr && coll->all_reduce && coll->comm_get_id && coll->comm_create && coll->comm_all_reduce,
           "the plugin offers collectives");
    if (!coll) return 1;
    const int64_t count = 1000;
    std::vector<std::unique_ptr<TestDevice>> devs;
    std::vector<std::unique_ptr<DeviceTensor>> bufs;
    std::vector<void*> ctxs, ptrs;
    for (int i = 0; i < n; ++i) {
      devs.push_back(std::make_unique<TestDevice>(cuda, i));
      bufs.push_back(std::make_unique<DeviceTensor>(*devs.back(), AXON_FLOAT32, std::vector<int64_t>{count}));
      ctxs.push_back(devs.back()->api.device_ctx);
      ptrs.push_back(bufs.back()->t.data);
    }
    // GPU i starts from (i+1) * (k%7): the sum is n(n+1)/2 * (k%7), the mean
    // (n+1)/2 * (k%7); both exact in float for these sizes.
    auto fill = [&] {
      for (int i = 0; i < n; ++i) {
        std::vector<float> v(count);
        for (int64_t k = 0; k < count; ++k) v[k] = float(i + 1) * float(k % 7);
        bufs[i]->upload(v);
      }
    };
    for (axon_reduce_op op : {AXON_REDUCE_SUM, AXON_REDUCE_MEAN}) {
      const char* name = op == AXON_REDUCE_SUM ? "SUM" : "MEAN";
      fill();
      axon_error err{};
      axon_status st = coll->all_reduce(cuda.api.plugin_ctx, n, ctxs.data(), ptrs.data(), count, AXON_FLOAT32, op, &err);
      expect(st == AXON_OK, std::string("all_reduce ") + name + " over " + std::to_string(n) + " GPU(s): " +
                                (st ? err.message : "ok"));
      if (n < 2) {
        std::printf("SKIP  all_reduce %s values: one GPU (a world of one cannot tell a reduction from doing nothing)\n", name);
        continue;
      }
      const float factor = op == AXON_REDUCE_SUM ? float(n * (n + 1) / 2) : float(n + 1) / 2;
      for (int i = 0; i < n; ++i) {
        devs[i]->sync();
        auto v = bufs[i]->download<float>();
        bool ok = true;
        for (int64_t k = 0; k < count; ++k) ok = ok && v[k] == factor * float(k % 7);
        expect(ok, std::string("all_reduce ") + name + " values on GPU " + std::to_string(i));
      }
    }
    // Queued (all_reduce_async): each GPU's share on its communication
    // stream after a point on its own stream, a second point recorded after
    // it, which the device's stream then waits for before the download.
    expect(coll->all_reduce_async != nullptr && coll->comm_all_reduce_async != nullptr,
           "the plugin offers queued all-reduces");
    auto event = [](TestDevice& d) {
      axon_event e = nullptr;
      axon_error e_err{};
      check(d.api.event_create(d.api.device_ctx, &e, &e_err), e_err, "event_create");
      return e;
    };
    std::vector<axon_event> ready, done;
    for (auto& d : devs) {
      ready.push_back(event(*d));
      done.push_back(event(*d));
    }
    if (coll->all_reduce_async != nullptr) {
      fill();
      axon_error err{};
      for (int i = 0; i < n; ++i)
        check(devs[i]->api.event_record(ctxs[i], ready[i], nullptr, &err), err, "event_record");
      axon_status st = coll->all_reduce_async(cuda.api.plugin_ctx, n, ctxs.data(), ptrs.data(), count, AXON_FLOAT32,
                                              AXON_REDUCE_SUM, ready.data(), done.data(), &err);
      expect(st == AXON_OK, std::string("all_reduce_async SUM over ") + std::to_string(n) + " GPU(s): " +
                                (st ? err.message : "ok"));
      const float factor = float(n * (n + 1) / 2);
      for (int i = 0; i < n; ++i) {
        check(devs[i]->api.event_wait(ctxs[i], done[i], nullptr, &err), err, "event_wait");
        auto v = bufs[i]->download<float>();  // on the device's stream, after the point it waits for
        int32_t reached = 0;
        check(devs[i]->api.event_query(ctxs[i], done[i], &reached, &err), err, "event_query");
        bool ok = reached == 1;
        for (int64_t k = 0; k < count; ++k) ok = ok && v[k] == factor * float(k % 7);
        expect(ok, "all_reduce_async: GPU " + std::to_string(i) + "'s done event reached and its sum in");
      }
    }
    // Cross-process path with a world of one.
    char id[AXON_COMM_ID_CAPACITY];
    size_t id_size = sizeof id;
    axon_error err{};
    check(coll->comm_get_id(cuda.api.plugin_ctx, id, &id_size, &err), err, "comm_get_id");
    void* comm = nullptr;
    check(coll->comm_create(ctxs[0], id, id_size, 0, 1, &comm, &err), err, "comm_create");
    axon_status st = coll->comm_all_reduce(comm, ptrs[0], count, AXON_FLOAT32, AXON_REDUCE_SUM, 10000, &err);
    expect(st == AXON_OK, std::string("comm_all_reduce (world 1, timeout 10 s): ") + (st ? err.message : "ok"));
    std::printf("SKIP  comm_all_reduce values: a world of one (this check runs on one machine)\n");
    if (coll->comm_all_reduce_async != nullptr) {
      check(devs[0]->api.event_record(ctxs[0], ready[0], nullptr, &err), err, "event_record");
      st = coll->comm_all_reduce_async(comm, ptrs[0], count, AXON_FLOAT32, AXON_REDUCE_SUM, ready[0], done[0], 10000,
                                       &err);
      expect(st == AXON_OK, std::string("comm_all_reduce_async (world 1): ") + (st ? err.message : "ok"));
      st = devs[0]->api.event_synchronize(ctxs[0], done[0], &err);
      expect(st == AXON_OK, std::string("comm_all_reduce_async: its done event reached: ") + (st ? err.message : "ok"));
    }
    for (int i = 0; i < n; ++i) {
      devs[i]->api.event_destroy(ctxs[i], ready[i]);
      devs[i]->api.event_destroy(ctxs[i], done[i]);
    }
    coll->comm_destroy(comm);
    // A world of two with no second rank: set-up must end with
    // AXON_DEADLINE_EXCEEDED after AXON_NCCL_INIT_TIMEOUT, not hang.
    setenv("AXON_NCCL_INIT_TIMEOUT", "3", 1);
    id_size = sizeof id;
    check(coll->comm_get_id(cuda.api.plugin_ctx, id, &id_size, &err), err, "comm_get_id");
    void* lonely = nullptr;
    axon_error err2{};
    const auto t0 = std::chrono::steady_clock::now();
    st = coll->comm_create(ctxs[0], id, id_size, 0, 2, &lonely, &err2);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("       comm_create without a peer: status %d after %.1f s: %s\n", static_cast<int>(st), secs, err2.message);
    expect(st == AXON_DEADLINE_EXCEEDED && std::string(err2.message).find("rank 0 of 2") != std::string::npos,
           "comm_create without a peer times out with AXON_DEADLINE_EXCEEDED naming the rank");
    std::printf("SUMMARY: %s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
