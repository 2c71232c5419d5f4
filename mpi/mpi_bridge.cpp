// libaxon-mpi.so: every MPI call of the multi-worker strategy, behind the
// private table of axon_mpi.h. Collectives are started non-blocking and
// polled against a deadline, so a rank that died or stalled turns into a
// timeout the caller can report, never a hang.
#include <axon_mpi.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string g_library_version, g_processor_name;
std::vector<float> g_chunks;  // the all-reduce's received chunks, kept between calls
// AXON_TEST_SLOW_LINK_MS_PER_MIB: a test knob that makes every all-reduce
// last at least this many milliseconds per MiB summed, asleep (a slow
// network, which costs time but no CPU), to measure how much of it the
// overlap with backward hides. 0: off.
double g_slow_link_ms_per_mib = 0;

int fail(char* err, size_t size, int code, const std::string& message) {
  if (size > 0) std::snprintf(err, size, "%s", message.c_str());
  return code;
}

std::string mpi_message(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

// Tests `request` until it completes or the deadline passes: busy for kSpin
// (the other ranks are usually about to arrive, and an all-reduce after
// backward waits on an idle core), then napping kNap between tests, as ranks
// that share cores (mpirun --oversubscribe) need the cores, and so does
// backward while this thread sums buckets beside it. Never sched_yield:
// Linux's EEVDF scheduler (6.6 on) moves a yielding thread's deadline back
// each time, so a thread that polls by yielding beside busy threads waits
// milliseconds for a core when it next has work (measured: the first
// gradient bucket's all-reduce took 5-6 ms instead of 0.4).
int wait(MPI_Request* request, double timeout_s, const char* what, char* err, size_t err_size) {
  using clock = std::chrono::steady_clock;
  constexpr auto kSpin = std::chrono::microseconds(200), kNap = std::chrono::microseconds(50);
  const auto start = clock::now();
  const auto deadline = start + std::chrono::duration<double>(timeout_s);
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return fail(err, err_size, AXON_MPI_ERROR, std::string(what) + ": " + mpi_message(rc));
    if (done) return AXON_MPI_OK;
    const auto now = clock::now();
    if (timeout_s > 0 && now > deadline)
      return fail(err, err_size, AXON_MPI_TIMEOUT, std::string(what) + " did not complete in time");
    if (now - start > kSpin) std::this_thread::sleep_for(kNap);
  }
}

int started(int rc, const char* what, char* err, size_t err_size) {
  return rc == MPI_SUCCESS ? AXON_MPI_OK : fail(err, err_size, AXON_MPI_ERROR, std::string(what) + ": " + mpi_message(rc));
}

int init(int* rank, int* size, char* err, size_t err_size) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    // Only the thread that initialised MPI calls it (the strategy's reduction
    // runs on the training loop's thread).
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return fail(err, err_size, AXON_MPI_ERROR, "MPI_Init_thread: " + mpi_message(rc));
    if (provided < MPI_THREAD_FUNNELED)
      return fail(err, err_size, AXON_MPI_ERROR, "the MPI library offers no MPI_THREAD_FUNNELED support");
  }
  // Errors come back as codes (and become one clear message) instead of
  // MPI's default of aborting the job from inside the library.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (const char* v = std::getenv("AXON_TEST_SLOW_LINK_MS_PER_MIB"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double ms = std::strtod(v, &end);
    if (end == v || *end != '\0' || !(ms >= 0) || ms > 1e6)
      return fail(err, err_size, AXON_MPI_ERROR,
                  std::string("AXON_TEST_SLOW_LINK_MS_PER_MIB='") + v + "' is not a number of milliseconds per MiB");
    g_slow_link_ms_per_mib = ms;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);

  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  g_library_version.assign(version, static_cast<size_t>(length));
  g_library_version = g_library_version.substr(0, g_library_version.find_first_of(",\n"));
  char name[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(name, &length);
  g_processor_name.assign(name, static_cast<size_t>(length));
  return AXON_MPI_OK;
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void abort_job(int code) { MPI_Abort(MPI_COMM_WORLD, code); }

int broadcast(void* data, int64_t bytes, double timeout_s, char* err, size_t err_size) {
  // MPI counts are ints: large buffers go in pieces.
  for (int64_t offset = 0; offset < bytes; offset += INT_MAX) {
    const int n = static_cast<int>(std::min<int64_t>(bytes - offset, INT_MAX));
    MPI_Request request;
    int rc = started(MPI_Ibcast(static_cast<char*>(data) + offset, n, MPI_BYTE, 0, MPI_COMM_WORLD, &request),
                     "MPI_Ibcast", err, err_size);
    if (rc == AXON_MPI_OK) rc = wait(&request, timeout_s, "broadcast", err, err_size);
    if (rc != AXON_MPI_OK) return rc;
  }
  return AXON_MPI_OK;
}

// Reduce-scatter by hand, then all-gather: rank r receives chunk r of every
// rank's buffer (MPI_Ialltoallv) and adds them in rank order, so the sum's
// order is ours, not the MPI library's algorithm's; then every rank gathers
// every summed chunk. Each rank sends and receives 2 (n-1)/n of the buffer,
// as a ring all-reduce does.
int sum_f32(float* data, int64_t count, double timeout_s, char* err, size_t err_size) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (count > INT_MAX)
    return fail(err, err_size, AXON_MPI_ERROR, "all-reduce of " + std::to_string(count) + " floats: more than MPI's int count");
  if (size == 1 || count == 0) return AXON_MPI_OK;
  const int n = static_cast<int>(count);
  const int chunk = (n + size - 1) / size;
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    displs[static_cast<size_t>(r)] = std::min(n, r * chunk);
    counts[static_cast<size_t>(r)] = std::min(n, (r + 1) * chunk) - displs[static_cast<size_t>(r)];
  }
  const int mine = counts[static_cast<size_t>(rank)];
  std::vector<int> recv_counts(static_cast<size_t>(size), mine), recv_displs(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) recv_displs[static_cast<size_t>(r)] = r * mine;
  g_chunks.resize(static_cast<size_t>(size) * static_cast<size_t>(mine) + 1);

  MPI_Request request;
  int rc = started(MPI_Ialltoallv(data, counts.data(), displs.data(), MPI_FLOAT, g_chunks.data(), recv_counts.data(),
                                  recv_displs.data(), MPI_FLOAT, MPI_COMM_WORLD, &request),
                   "MPI_Ialltoallv", err, err_size);
  if (rc == AXON_MPI_OK) rc = wait(&request, timeout_s, "all-reduce (scatter)", err, err_size);
  if (rc != AXON_MPI_OK) return rc;

  float* out = data + displs[static_cast<size_t>(rank)];
  const float* in = g_chunks.data();
  for (int i = 0; i < mine; ++i) out[i] = in[i];
  for (int r = 1; r < size; ++r) {
    const float* part = in + static_cast<size_t>(r) * static_cast<size_t>(mine);
    for (int i = 0; i < mine; ++i) out[i] += part[i];
  }

  rc = started(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), displs.data(), MPI_FLOAT,
                               MPI_COMM_WORLD, &request),
               "MPI_Iallgatherv", err, err_size);
  if (rc == AXON_MPI_OK) rc = wait(&request, timeout_s, "all-reduce (gather)", err, err_size);
  return rc;
}

int all_reduce_sum_f32(float* data, int64_t count, double timeout_s, char* err, size_t err_size) {
  const auto start = std::chrono::steady_clock::now();
  const int rc = sum_f32(data, count, timeout_s, err, err_size);
  if (rc == AXON_MPI_OK && g_slow_link_ms_per_mib > 0) {
    const double mib = static_cast<double>(count) * sizeof(float) / (1 << 20);
    std::this_thread::sleep_until(start + std::chrono::duration<double, std::milli>(g_slow_link_ms_per_mib * mib));
  }
  return rc;
}

int all_gather(const void* mine, void* all, int64_t bytes_each, double timeout_s, char* err, size_t err_size) {
  if (bytes_each > INT_MAX) return fail(err, err_size, AXON_MPI_ERROR, "all-gather: more than MPI's int count");
  MPI_Request request;
  const int n = static_cast<int>(bytes_each);
  int rc = started(MPI_Iallgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, MPI_COMM_WORLD, &request), "MPI_Iallgather",
                   err, err_size);
  if (rc == AXON_MPI_OK) rc = wait(&request, timeout_s, "all-gather", err, err_size);
  return rc;
}

const char* library_version() { return g_library_version.c_str(); }
const char* processor_name() { return g_processor_name.c_str(); }

const axon_mpi_api kTable = {
    AXON_MPI_TABLE_VERSION, init, finalize, abort_job, broadcast, all_reduce_sum_f32, all_gather, library_version,
    processor_name,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const axon_mpi_api* axon_mpi_table() { return &kTable; }
