// All-reduce with NCCL: across this process's devices (one communicator per
// device set, from ncclCommInitAll, grouped calls), and across processes
// (ncclGetUniqueId / ncclCommInitRankConfig, non-blocking, so a stuck peer
// becomes AXON_DEADLINE_EXCEEDED after the caller's timeout instead of a hang).
#include "collectives.hpp"

#include "cuda_device.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace axon::cuda {

namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t nccl_type(axon_dtype t) {
  switch (t) {
    case AXON_FLOAT32: return ncclFloat32;
    case AXON_INT32: return ncclInt32;
    case AXON_UINT8: return ncclUint8;
    case AXON_INT64: return ncclInt64;
  }
  sdk::fail(AXON_INVALID_ARGUMENT, "all-reduce: unknown dtype");
}

ncclRedOp_t nccl_op(axon_reduce_op op) { return op == AXON_REDUCE_MEAN ? ncclAvg : ncclSum; }

// The communicators of one set of devices (ncclCommInitAll), kept for the
// life of the process; or why they could not be set up, which every later
// all-reduce over the same devices reports rather than using them.
struct CommSet {
  std::vector<ncclComm_t> comms;
  std::string failure;
};

struct InProcessComms {
  std::mutex mu;
  std::map<std::vector<int>, CommSet> by_devices;
};

InProcessComms& in_process() {
  static auto* c = new InProcessComms;  // never destroyed: NCCL may be gone at exit
  return *c;
}

std::string gpu_list(const std::vector<int>& ordinals) {
  std::string s = ordinals.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < ordinals.size(); ++i) s += (i ? ", " : "") + std::to_string(ordinals[i]);
  return s + " (CUDA ordinals)";
}

// ncclGroupStart() .. ncclGroupEnd(), ended on every path: a group left open
// would swallow the thread's next collectives. A call that fails inside the
// group makes ncclGroupEnd discard the group (and return that error), so
// nothing but NCCL calls may throw between the two.
class NcclGroup {
 public:
  NcclGroup() { NCCL_CHECK(ncclGroupStart()); }
  ~NcclGroup() {
    if (open_) ncclGroupEnd();
  }
  NcclGroup(const NcclGroup&) = delete;
  NcclGroup& operator=(const NcclGroup&) = delete;
  void end() {
    open_ = false;
    NCCL_CHECK(ncclGroupEnd());
  }

 private:
  bool open_ = true;
};

axon_status all_reduce(void*, int32_t n, void* const* ctxs, void* const* buffers, int64_t count, axon_dtype dtype,
                       axon_reduce_op op, axon_error* err) {
  return sdk::guarded(err, [&] {
    sdk::require(n >= 1 && ctxs != nullptr && buffers != nullptr, "all_reduce: need at least one device and buffer");
    sdk::require(count >= 0, "all_reduce: negative count");
    std::vector<CudaDevice*> devs;
    std::vector<int> ordinals;
    for (int i = 0; i < n; ++i) {
      devs.push_back(&device_from_ctx(ctxs[i]));
      ordinals.push_back(devs.back()->ordinal());
    }
    const ncclDataType_t type = nccl_type(dtype);
    // One device goes through NCCL too (an in-process all-reduce of one rank
    // changes nothing): the same path as several, so one GPU can test it.
    if (count == 0) return;
    auto& ip = in_process();
    std::lock_guard<std::mutex> lock(ip.mu);
    CommSet& set = ip.by_devices[ordinals];
    if (!set.failure.empty())
      sdk::fail(AXON_UNAVAILABLE, sdk::format("NCCL all-reduce over %s: %s", gpu_list(ordinals).c_str(), set.failure.c_str()));
    if (set.comms.empty()) {
      // Into a local vector: communicators of a failed set-up are never used.
      std::vector<ncclComm_t> comms(static_cast<size_t>(n));
      try {
        NCCL_CHECK(ncclCommInitAll(comms.data(), n, ordinals.data()));
      } catch (const sdk::Error& e) {
        set.failure = std::string("the communicators could not be set up: ") + e.what();
        throw;
      }
      set.comms = std::move(comms);
    }
    // NCCL makes each communicator's device current itself: no cudaSetDevice
    // (which could throw) inside the group.
    NcclGroup group;
    for (int i = 0; i < n; ++i)
      NCCL_CHECK(ncclAllReduce(buffers[i], buffers[i], static_cast<size_t>(count), type, nccl_op(op), set.comms[i],
                               devs[i]->stream()));
    group.end();
  });
}

struct Comm {
  CudaDevice* dev = nullptr;
  ncclComm_t comm = nullptr;
  int rank = 0, world = 0;
  bool aborted = false;
  cudaEvent_t done = nullptr;
};

axon_status comm_get_id(void*, void* id, size_t* id_size, axon_error* err) {
  return sdk::guarded(err, [&] {
    sdk::require(id != nullptr && id_size != nullptr, "comm_get_id: null id or size");
    static_assert(sizeof(ncclUniqueId) <= AXON_COMM_ID_CAPACITY, "NCCL id larger than the ABI's capacity");
    ncclUniqueId uid;
    NCCL_CHECK(ncclGetUniqueId(&uid));
    std::memcpy(id, &uid, sizeof uid);
    *id_size = sizeof uid;
  });
}

// Polls a non-blocking communicator until its pending work is issued; throws
// on an NCCL error, or aborts it and throws DEADLINE_EXCEEDED at `deadline`.
void wait_issued(Comm& c, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(c.comm, &state));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) {
      ncclCommAbort(c.comm);
      c.aborted = true;
      sdk::fail(AXON_INTERNAL, sdk::format("%s failed on rank %d of %d (%s): %s; the communicator was aborted", what.c_str(),
                                           c.rank, c.world, c.dev->label().c_str(), ncclGetErrorString(state)));
    }
    if (Clock::now() > deadline) {
      ncclCommAbort(c.comm);
      c.aborted = true;
      sdk::fail(AXON_DEADLINE_EXCEEDED, sdk::format("%s timed out on rank %d of %d (%s); the communicator was aborted",
                                                    what.c_str(), c.rank, c.world, c.dev->label().c_str()));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Communicator set-up waits for every rank; AXON_NCCL_INIT_TIMEOUT (seconds,
// default 300) bounds that wait, after which the set-up is aborted.
int init_timeout_seconds() {
  const char* v = std::getenv("AXON_NCCL_INIT_TIMEOUT");
  const int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 300;
}

axon_status comm_create(void* device_ctx, const void* id, size_t id_size, int32_t rank, int32_t world, void** comm,
                        axon_error* err) {
  return sdk::guarded(err, [&] {
    sdk::require(device_ctx && id && comm, "comm_create: null device, id or comm");
    sdk::require(id_size == sizeof(ncclUniqueId),
                 sdk::format("comm_create: id has %zu bytes, NCCL's has %zu", id_size, sizeof(ncclUniqueId)));
    sdk::require(world >= 1 && rank >= 0 && rank < world, sdk::format("comm_create: rank %d of %d", rank, world));
    auto c = std::make_unique<Comm>();
    c->dev = &device_from_ctx(device_ctx);
    c->rank = rank;
    c->world = world;
    c->dev->activate();
    ncclUniqueId uid;
    std::memcpy(&uid, id, sizeof uid);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    NCCL_CHECK(ncclCommInitRankConfig(&c->comm, world, uid, rank, &config));
    const int limit = init_timeout_seconds();
    wait_issued(*c, Clock::now() + std::chrono::seconds(limit),
                sdk::format("NCCL communicator set-up (%d s limit, AXON_NCCL_INIT_TIMEOUT)", limit));
    CUDA_CHECK(cudaEventCreateWithFlags(&c->done, cudaEventDisableTiming));
    *comm = c.release();
  });
}

axon_status comm_all_reduce(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op, int32_t timeout_ms,
                            axon_error* err) {
  return sdk::guarded(err, [&] {
    sdk::require(comm != nullptr, "comm_all_reduce: null communicator");
    Comm& c = *static_cast<Comm*>(comm);
    if (c.aborted) sdk::fail(AXON_UNAVAILABLE, sdk::format("rank %d: the communicator was aborted after an earlier failure", c.rank));
    if (count == 0) return;
    c.dev->activate();
    const auto deadline = timeout_ms > 0 ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point::max();
    const std::string what = sdk::format("NCCL all-reduce of %lld %s values%s", (long long)count, sdk::dtype_name(dtype),
                                         timeout_ms > 0 ? sdk::format(" (timeout %d ms)", timeout_ms).c_str() : "");
    NCCL_CHECK(ncclAllReduce(buffer, buffer, static_cast<size_t>(count), nccl_type(dtype), nccl_op(op), c.comm, c.dev->stream()));
    wait_issued(c, deadline, what);
    if (timeout_ms <= 0) return;  // no timeout: stays asynchronous on the stream
    // With a timeout the host watches the collective finish (one round trip).
    CUDA_CHECK(cudaEventRecord(c.done, c.dev->stream()));
    for (;;) {
      cudaError_t q = cudaEventQuery(c.done);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) CUDA_CHECK(q);
      wait_issued(c, deadline, what);  // surfaces NCCL errors and the deadline
      if (Clock::now() > deadline) {
        ncclCommAbort(c.comm);
        c.aborted = true;
        sdk::fail(AXON_DEADLINE_EXCEEDED, sdk::format("%s timed out on rank %d of %d (%s); the communicator was aborted",
                                                      what.c_str(), c.rank, c.world, c.dev->label().c_str()));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
}

void comm_destroy(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr) return;
  cudaSetDevice(c->dev->ordinal());
  if (!c->aborted && c->comm) {
    // Finalize flushes pending work; abort if it does not settle in time.
    ncclResult_t state = ncclCommFinalize(c->comm);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while ((state == ncclSuccess || state == ncclInProgress) && Clock::now() < deadline) {
      if (ncclCommGetAsyncError(c->comm, &state) != ncclSuccess) state = ncclInternalError;
      if (state != ncclInProgress) break;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (state == ncclSuccess)
      ncclCommDestroy(c->comm);
    else
      ncclCommAbort(c->comm);
  }
  if (c->done) cudaEventDestroy(c->done);
  delete c;
}

}  // namespace

const axon_collective_api& nccl_collectives() {
  static const axon_collective_api api = [] {
    axon_collective_api a{};
    a.struct_size = sizeof a;
    a.all_reduce = all_reduce;
    a.comm_get_id = comm_get_id;
    a.comm_create = comm_create;
    a.comm_all_reduce = comm_all_reduce;
    a.comm_destroy = comm_destroy;
    return a;
  }();
  return api;
}

}  // namespace axon::cuda
