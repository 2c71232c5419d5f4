// All-reduce with NCCL: across this process's devices (one communicator per
// device set, from ncclCommInitAll, grouped calls), and across processes
// (ncclGetUniqueId / ncclCommInitRankConfig, non-blocking, so a stuck peer
// becomes AXON_DEADLINE_EXCEEDED after the caller's timeout instead of a hang).
// Every queued all-reduce is watched by its devices' waits (PendingCollective):
// an asynchronous NCCL error ends them naming the all-reduce, never a hang.
// The asynchronous forms run on each device's communication stream, between
// the events the host gives (NCCL on a side stream, as DDP and Horovod run it).
#include "collectives.hpp"

#include "cuda_device.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
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

// The communicators of one in-process device set (ncclCommInitAll) or of one
// rank of a cross-process job, shared with the collectives queued on them
// (CudaDevice::add_pending). After a failed set-up, an asynchronous error or
// a timeout they are aborted (ncclCommAbort also frees them) and `failure`
// says why: every later use reports it.
class CommState {
 public:
  explicit CommState(std::vector<ncclComm_t> comms = {}) : comms_(std::move(comms)) {}

  // ncclSuccess: sound and idle (or destroyed: nothing left to watch);
  // ncclInProgress: a non-blocking communicator is still issuing; else they
  // are aborted (now or before) and `why` says why.
  ncclResult_t poll(std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (destroyed_) return ncclSuccess;
    if (!failure_.empty()) {
      why = failure_;
      return ncclInvalidUsage;
    }
    ncclResult_t worst = ncclSuccess;
    for (ncclComm_t c : comms_) {
      ncclResult_t state = ncclSuccess;
      if (const ncclResult_t r = ncclCommGetAsyncError(c, &state); r != ncclSuccess) state = r;
      if (state == ncclInProgress) {
        worst = ncclInProgress;
      } else if (state != ncclSuccess) {
        why = abort_locked(
            sdk::format("the %s aborted after an asynchronous NCCL error: %s", noun(), ncclGetErrorString(state)));
        return state;
      }
    }
    return worst;
  }
  // Aborts the communicators (once); returns why they are gone.
  std::string abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    return abort_locked(sdk::format("the %s aborted: %s", noun(), why.c_str()));
  }
  void set_up_failed(const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    failure_ = "the communicators could not be set up: " + why;
  }
  // Runs f(comms) unless they are gone (then throws why, naming `what`).
  template <class F>
  void use(const std::string& what, F f) {
    std::lock_guard<std::mutex> lock(mu_);
    if (destroyed_) sdk::fail(AXON_INVALID_ARGUMENT, what + ": the communicator was destroyed");
    if (!failure_.empty()) sdk::fail(AXON_UNAVAILABLE, what + ": " + failure_);
    f(comms_);
  }
  // comm_destroy: finalizes cleanly when sound, else nothing is left to free.
  void destroy() {
    std::lock_guard<std::mutex> lock(mu_);
    destroyed_ = true;
    if (!failure_.empty()) return;
    for (ncclComm_t c : comms_) {
      // Finalize flushes pending work; abort if it does not settle in time.
      ncclResult_t state = ncclCommFinalize(c);
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      while ((state == ncclSuccess || state == ncclInProgress) && Clock::now() < deadline) {
        if (ncclCommGetAsyncError(c, &state) != ncclSuccess) state = ncclInternalError;
        if (state != ncclInProgress) break;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      if (state == ncclSuccess)
        ncclCommDestroy(c);
      else
        ncclCommAbort(c);
    }
    comms_.clear();
  }

 private:
  const char* noun() const { return comms_.size() > 1 ? "communicators were" : "communicator was"; }
  std::string abort_locked(const std::string& why) {
    if (failure_.empty()) {
      for (ncclComm_t c : comms_) ncclCommAbort(c);
      comms_.clear();
      failure_ = why;
    }
    return failure_;
  }

  std::mutex mu_;
  std::vector<ncclComm_t> comms_;  // empty once aborted or destroyed
  std::string failure_;
  bool destroyed_ = false;
};

// The collective `what`, queued on a device's stream, watched by the device's
// waits: an asynchronous error of its communicators, or `deadline` passing,
// aborts them and ends the wait with a message naming it.
PendingCollective watch(const std::shared_ptr<CommState>& state, const std::string& what,
                        Clock::time_point deadline = Clock::time_point::max()) {
  PendingCollective p;
  p.communicator = state.get();
  p.deadline = deadline;
  p.failure = [state, what]() -> std::string {
    std::string why;
    const ncclResult_t r = state->poll(why);
    return r == ncclSuccess || r == ncclInProgress ? std::string() : what + " failed: " + why;
  };
  p.expire = [state, what] {
    state->abort(what + " timed out");
    return what + " timed out; the communicator was aborted";
  };
  return p;
}

// The communicators of each set of devices seen, kept for the life of the process.
struct InProcessComms {
  std::mutex mu;
  std::map<std::vector<int>, std::shared_ptr<CommState>> by_devices;
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

// The communicators of the in-process set of these devices, made on first use.
std::shared_ptr<CommState> in_process_comms(const std::vector<int>& ordinals) {
  auto& ip = in_process();
  std::lock_guard<std::mutex> lock(ip.mu);
  auto& slot = ip.by_devices[ordinals];
  if (slot == nullptr) {
    // Into a local vector: communicators of a failed set-up are never used.
    std::vector<ncclComm_t> comms(ordinals.size());
    try {
      NCCL_CHECK(ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()), ordinals.data()));
      slot = std::make_shared<CommState>(std::move(comms));
    } catch (const sdk::Error& e) {
      slot = std::make_shared<CommState>();
      slot->set_up_failed(e.what());
      throw;
    }
  }
  return slot;
}

// all_reduce and all_reduce_async: on each device's own stream, or (queued)
// on its communication stream after wait_for[i], with done[i] recorded after.
void in_process_all_reduce(int32_t n, void* const* ctxs, void* const* buffers, int64_t count, axon_dtype dtype,
                           axon_reduce_op op, const axon_event* wait_for, const axon_event* done, bool queued) {
  sdk::require(n >= 1 && ctxs != nullptr && buffers != nullptr, "all_reduce: need at least one device and buffer");
  sdk::require(count >= 0, "all_reduce: negative count");
  sdk::require(!queued || done != nullptr, "all_reduce_async: no events to record");
  std::vector<CudaDevice*> devs;
  std::vector<int> ordinals;
  std::vector<cudaStream_t> streams;
  for (int i = 0; i < n; ++i) {
    devs.push_back(&device_from_ctx(ctxs[i]));
    ordinals.push_back(devs.back()->ordinal());
    sdk::require(!queued || done[i] != nullptr, sdk::format("all_reduce_async: no event for device %d", i));
    streams.push_back(queued ? devs.back()->communication_stream() : devs.back()->stream());
  }
  const ncclDataType_t type = nccl_type(dtype);
  if (queued && wait_for != nullptr)
    for (int i = 0; i < n; ++i)
      if (wait_for[i] != nullptr) {
        devs[i]->activate();
        CUDA_CHECK(cudaStreamWaitEvent(streams[i], reinterpret_cast<cudaEvent_t>(wait_for[i]), 0));
      }
  // One device goes through NCCL too (an in-place all-reduce of one rank
  // changes nothing): the same path as several, so one GPU can test it.
  if (count > 0) {
    const std::string gpus = gpu_list(ordinals);
    std::shared_ptr<CommState> state = in_process_comms(ordinals);
    const std::string what = sdk::format("NCCL all-reduce of %lld %s values over %s", (long long)count,
                                         sdk::dtype_name(dtype), gpus.c_str());
    state->use("NCCL all-reduce over " + gpus, [&](const std::vector<ncclComm_t>& comms) {
      // NCCL makes each communicator's device current itself: no cudaSetDevice
      // (which could throw) inside the group.
      NcclGroup group;
      for (int i = 0; i < n; ++i)
        NCCL_CHECK(ncclAllReduce(buffers[i], buffers[i], static_cast<size_t>(count), type, nccl_op(op), comms[i],
                                 streams[i]));
      group.end();
    });
    for (CudaDevice* d : devs) d->add_pending(watch(state, what));
  }
  if (queued)
    for (int i = 0; i < n; ++i) {
      devs[i]->activate();
      CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(done[i]), streams[i]));
    }
}

axon_status all_reduce(void*, int32_t n, void* const* ctxs, void* const* buffers, int64_t count, axon_dtype dtype,
                       axon_reduce_op op, axon_error* err) {
  return sdk::guarded(err, [&] { in_process_all_reduce(n, ctxs, buffers, count, dtype, op, nullptr, nullptr, false); });
}

axon_status all_reduce_async(void*, int32_t n, void* const* ctxs, void* const* buffers, int64_t count,
                             axon_dtype dtype, axon_reduce_op op, const axon_event* wait_for, const axon_event* done,
                             axon_error* err) {
  return sdk::guarded(err, [&] { in_process_all_reduce(n, ctxs, buffers, count, dtype, op, wait_for, done, true); });
}

struct Comm {
  CudaDevice* dev = nullptr;
  std::shared_ptr<CommState> state;
  int rank = 0, world = 0;
  std::string where() const { return sdk::format("rank %d of %d (%s)", rank, world, dev->label().c_str()); }
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
// on an NCCL error (the communicator is then aborted), or aborts it and
// throws DEADLINE_EXCEEDED at `deadline`. `what` names the work and the rank.
void wait_issued(Comm& c, Clock::time_point deadline, const std::string& what) {
  for (;;) {
    std::string why;
    const ncclResult_t r = c.state->poll(why);
    if (r == ncclSuccess) return;
    if (r != ncclInProgress) sdk::fail(AXON_INTERNAL, what + " failed: " + why);
    if (Clock::now() > deadline) {
      c.state->abort(what + " timed out");
      sdk::fail(AXON_DEADLINE_EXCEEDED, what + " timed out; the communicator was aborted");
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
    ncclComm_t handle = nullptr;
    NCCL_CHECK(ncclCommInitRankConfig(&handle, world, uid, rank, &config));
    c->state = std::make_shared<CommState>(std::vector<ncclComm_t>{handle});
    const int limit = init_timeout_seconds();
    wait_issued(
        *c, Clock::now() + std::chrono::seconds(limit),
        sdk::format("NCCL communicator set-up (%d s limit, AXON_NCCL_INIT_TIMEOUT) on %s", limit, c->where().c_str()));
    *comm = c.release();
  });
}

// comm_all_reduce and comm_all_reduce_async (queued: on the communication
// stream after wait_for, with done recorded after).
void rank_all_reduce(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op,
                     int32_t timeout_ms, axon_event wait_for, axon_event done, bool queued) {
  sdk::require(comm != nullptr, "comm_all_reduce: null communicator");
  sdk::require(!queued || done != nullptr, "comm_all_reduce_async: no event to record");
  Comm& c = *static_cast<Comm*>(comm);
  const ncclDataType_t type = nccl_type(dtype);
  c.dev->activate();
  const cudaStream_t stream = queued ? c.dev->communication_stream() : c.dev->stream();
  if (queued && wait_for != nullptr)
    CUDA_CHECK(cudaStreamWaitEvent(stream, reinterpret_cast<cudaEvent_t>(wait_for), 0));
  if (count > 0) {
    const auto deadline =
        timeout_ms > 0 ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point::max();
    const std::string what =
        sdk::format("NCCL all-reduce of %lld %s values%s on %s", (long long)count, sdk::dtype_name(dtype),
                    timeout_ms > 0 ? sdk::format(" (timeout %d ms)", timeout_ms).c_str() : "", c.where().c_str());
    c.state->use("NCCL all-reduce on " + c.where(), [&](const std::vector<ncclComm_t>& comms) {
      NCCL_CHECK(ncclAllReduce(buffer, buffer, static_cast<size_t>(count), type, nccl_op(op), comms[0], stream));
    });
    wait_issued(c, deadline, what);
    c.dev->add_pending(watch(c.state, what, deadline));
    // Waited for with a timeout, the host watches the collective finish (one
    // round trip); without one, or queued, the device's next wait watches it.
    if (!queued && timeout_ms > 0) c.dev->wait_stream();
  }
  if (queued) CUDA_CHECK(cudaEventRecord(reinterpret_cast<cudaEvent_t>(done), stream));
}

axon_status comm_all_reduce(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op,
                            int32_t timeout_ms, axon_error* err) {
  return sdk::guarded(
      err, [&] { rank_all_reduce(comm, buffer, count, dtype, op, timeout_ms, nullptr, nullptr, false); });
}

axon_status comm_all_reduce_async(void* comm, void* buffer, int64_t count, axon_dtype dtype, axon_reduce_op op,
                                  axon_event wait_for, axon_event done, int32_t timeout_ms, axon_error* err) {
  return sdk::guarded(err, [&] { rank_all_reduce(comm, buffer, count, dtype, op, timeout_ms, wait_for, done, true); });
}

void comm_destroy(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr) return;
  cudaSetDevice(c->dev->ordinal());
  c->state->destroy();
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
    a.all_reduce_async = all_reduce_async;
    a.comm_all_reduce_async = comm_all_reduce_async;
    return a;
  }();
  return api;
}

}  // namespace axon::cuda
