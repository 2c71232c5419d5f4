// Workers: joins an mpirun job through libaxon-mpi.so (dlopen'ed here and
// nowhere else) and turns its status codes into axon's errors.
#include "collective_messages.hpp"

#include <axon/error.hpp>
#include <axon/workers.hpp>
#include <axon_mpi.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace axon {
namespace {

namespace fs = std::filesystem;

constexpr size_t kGatherBytes = 4096;

// libaxon-mpi.so next to libaxon-core.so (build tree and install alike).
fs::path bridge_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&started_by_mpi_launcher), &info) != 0 && info.dli_fname != nullptr)
    return fs::path(info.dli_fname).parent_path() / "libaxon-mpi.so";
  return "libaxon-mpi.so";
}

const axon_mpi_api* load_bridge() {
  const fs::path path = bridge_path();
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError("--strategy multi-worker needs MPI, and this build has none: " + path.string() +
                     " was not built (install Open MPI, libopenmpi-dev, and rebuild)");
  // RTLD_GLOBAL: Open MPI loads its own components with dlopen, and they
  // resolve symbols of libmpi that must therefore be global.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr)
    throw UsageError("--strategy multi-worker: cannot load " + path.string() + ": " + dlerror());
  auto table = reinterpret_cast<axon_mpi_table_fn>(dlsym(handle, AXON_MPI_ENTRY_SYMBOL));
  const axon_mpi_api* api = table != nullptr ? table() : nullptr;
  if (api == nullptr || api->version != AXON_MPI_TABLE_VERSION)
    throw UsageError("--strategy multi-worker: " + path.string() + " is from another build of axon");
  return api;  // never unloaded: MPI does not survive dlclose
}

}  // namespace

// mpirun (Open MPI's, and PMIx-based launchers) sets these in every rank.
bool started_by_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (const char* s = std::getenv(v); s != nullptr && *s != '\0') return true;
  return false;
}

std::unique_ptr<Workers> Workers::join() {
  std::unique_ptr<Workers> w(new Workers());
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) == 0) w->host_ = host;
  if (!started_by_mpi_launcher()) return w;
  w->api_ = load_bridge();
  char err[1024] = "";
  if (w->api_->init(&w->rank_, &w->size_, err, sizeof err) != AXON_MPI_OK)
    throw RuntimeError(std::string("cannot join the MPI job: ") + err);
  w->finalize_ = true;
  w->mpi_version_ = w->api_->library_version();
  if (const char* name = w->api_->processor_name(); name != nullptr && *name != '\0') w->host_ = name;
  return w;
}

Workers::~Workers() {
  if (finalize_) api_->finalize();
}

void Workers::fail(int status, const std::string& what, int64_t step, size_t bytes, double timeout_s,
                   const std::string& detail) const {
  std::string where = "rank " + std::to_string(rank_) + ": " + what + " (" + distribute::byte_count(bytes) + ")";
  if (step >= 0) where += " at step " + std::to_string(step);
  if (status == AXON_MPI_TIMEOUT) throw RuntimeError(distribute::timed_out(where, timeout_s));
  throw RuntimeError(where + " failed: " + detail);
}

void Workers::broadcast(void* data, size_t bytes, const std::string& what, double timeout_s) {
  if (!launched() || size_ == 1) return;
  char err[1024] = "";
  const int rc = api_->broadcast(data, static_cast<int64_t>(bytes), timeout_s, err, sizeof err);
  if (rc != AXON_MPI_OK) fail(rc, "broadcast of " + what, -1, bytes, timeout_s, err);
}

void Workers::all_reduce_sum(float* data, int64_t count, const std::string& what, int64_t step, double timeout_s) {
  if (!launched() || size_ == 1) return;
  char err[1024] = "";
  const int rc = api_->all_reduce_sum_f32(data, count, timeout_s, err, sizeof err);
  if (rc != AXON_MPI_OK)
    fail(rc, "all-reduce of " + what, step, static_cast<size_t>(count) * sizeof(float), timeout_s, err);
}

std::vector<std::string> Workers::all_gather(const std::string& mine, double timeout_s) {
  if (!launched() || size_ == 1) return {mine};
  std::vector<char> in(kGatherBytes, '\0'), all(kGatherBytes * static_cast<size_t>(size_));
  std::memcpy(in.data(), mine.data(), std::min(mine.size(), kGatherBytes - 1));
  char err[1024] = "";
  const int rc = api_->all_gather(in.data(), all.data(), kGatherBytes, timeout_s, err, sizeof err);
  if (rc != AXON_MPI_OK) fail(rc, "all-gather", -1, kGatherBytes, timeout_s, err);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.emplace_back(all.data() + static_cast<size_t>(r) * kGatherBytes);
  return out;
}

void Workers::abort(int exit_code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (launched()) api_->abort(exit_code);
  std::_Exit(exit_code);
}

}  // namespace axon
