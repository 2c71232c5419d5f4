// The fake NCCL (fake_cuda_libraries.hpp): communicators over host memory.
// A collective runs when every rank of its communicator set has queued it
// and the outermost group has ended, as NCCL launches it; a call that fails
// inside a group makes ncclGroupEnd discard the group and return that error.
#include "fake_cuda_libraries.hpp"

#include <cstring>
#include <map>
#include <string>
#include <vector>

struct ncclComm {
  int set = 0;  // communicators created together (one ncclCommInitAll, or one unique id)
  int rank = 0, nranks = 1;
  bool aborted = false;
  bool hung = false;  // a collective on it never finishes; it reports script().hang_async_error
};

namespace {

using namespace axon::fake;

struct Queued {
  void* buffer;
  size_t count;
  ncclDataType_t type;
  ncclRedOp_t op;
  ncclComm_t comm;
  cudaStream_t stream;
};

int next_set = 1;
std::vector<Queued> queued;
ncclResult_t group_error = ncclSuccess;
std::string last_error;

ncclResult_t failed(ncclResult_t r, const std::string& why) {
  last_error = why;
  return r;
}

// Runs the queued collectives whose sets are complete; those missing a rank
// stay queued, as NCCL's would wait for it.
void launch() {
  std::map<int, std::vector<Queued>> by_set;
  for (const Queued& q : queued) by_set[q.comm->set].push_back(q);
  queued.clear();
  for (auto& [set, ops] : by_set) {
    if (static_cast<int>(ops.size()) < ops.front().comm->nranks) {
      queued.insert(queued.end(), ops.begin(), ops.end());
      continue;
    }
    ++record().launched;
    if (script().hang_collectives) {
      for (const Queued& q : ops) {
        q.comm->hung = true;
        hang(q.stream, q.comm);
      }
      continue;
    }
    if (ops.front().type != ncclFloat32) continue;  // values only for float32
    std::vector<float> sum(ops.front().count, 0.f);
    for (const Queued& q : ops)
      for (size_t i = 0; i < q.count; ++i) sum[i] += static_cast<const float*>(q.buffer)[i];
    if (ops.front().op == ncclAvg)
      for (float& v : sum) v /= static_cast<float>(ops.size());
    for (const Queued& q : ops) std::memcpy(q.buffer, sum.data(), q.count * sizeof(float));
  }
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* v) {
  *v = 22809;
  return ncclSuccess;
}
const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}
const char* ncclGetLastError(ncclComm_t) { return last_error.c_str(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, &next_set, sizeof next_set);
  ++next_set;
  return ncclSuccess;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int n, const int*) {
  ++record().init_all_calls;
  if (script().init_all_result != ncclSuccess) return failed(script().init_all_result, script().nccl_last_error);
  const int set = next_set++;
  for (int i = 0; i < n; ++i) comms[i] = new ncclComm{set, i, n};
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t*) {
  int set = 0;
  std::memcpy(&set, id.internal, sizeof set);
  *comm = new ncclComm{set, rank, nranks};
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* state) {
  ++record().async_polls;
  if (comm->aborted) return failed(ncclInvalidUsage, "fake NCCL: the communicator was used after ncclCommAbort");
  *state = comm->hung ? script().hang_async_error : ncclSuccess;
  return ncclSuccess;
}

// The real ncclCommAbort frees the communicator; here it stays, marked, so
// that a later use is caught rather than undefined.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm->aborted) return failed(ncclInvalidUsage, "fake NCCL: ncclCommAbort called twice");
  comm->aborted = true;
  ++record().aborted;
  release(comm);
  return ncclSuccess;
}
ncclResult_t ncclCommFinalize(ncclComm_t) { return ncclSuccess; }
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  comm->aborted = true;  // gone: any later use is an error
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  ++record().group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (record().group_depth == 0) return failed(ncclInvalidUsage, "fake NCCL: ncclGroupEnd without ncclGroupStart");
  if (--record().group_depth > 0) return ncclSuccess;
  if (group_error != ncclSuccess) {
    const ncclResult_t r = group_error;
    group_error = ncclSuccess;
    queued.clear();  // the failed group is discarded, nothing of it runs
    return r;
  }
  launch();
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  ncclResult_t r = ncclSuccess;
  if (comm == nullptr || comm->aborted)
    r = failed(ncclInvalidArgument, "fake NCCL: a null or aborted communicator");
  else if (send != recv)
    r = failed(ncclInvalidArgument, "fake NCCL: only in-place all-reduce is modelled");
  else if (comm->rank == script().fail_all_reduce_rank) {
    script().fail_all_reduce_rank = -1;
    r = failed(ncclInvalidArgument, "fake NCCL: the all-reduce of rank " + std::to_string(comm->rank) + " refused");
  }
  if (r != ncclSuccess) {
    if (record().group_depth > 0) group_error = r;
    return r;
  }
  queued.push_back({recv, count, type, op, comm, stream});
  if (record().group_depth == 0) launch();
  return ncclSuccess;
}

}  // extern "C"
