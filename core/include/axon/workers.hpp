// The processes of a multi-worker job started by Open MPI's mpirun: this
// process's rank, the job's size, and the host-side collectives between
// them. MPI itself lives in libaxon-mpi.so (next to libaxon-core), loaded
// only by Workers::join, so a run without --strategy multi-worker never
// needs libmpi.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct axon_mpi_api;

namespace axon {

// True in a process an MPI launcher started: mpirun (Open MPI) and PMIx- or
// PMI-based launchers set OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK in
// every rank.
bool started_by_mpi_launcher();

class Workers {
 public:
  // Joins the job when this process was started by mpirun (its variables,
  // OMPI_COMM_WORLD_SIZE or PMIX_RANK, are set): loads libaxon-mpi.so and
  // initialises MPI. Otherwise a job of one worker that never touches MPI
  // (launched() is false). UsageError when MPI cannot be loaded.
  static std::unique_ptr<Workers> join();
  ~Workers();  // MPI_Finalize after a normal end
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool launched() const { return api_ != nullptr; }
  // This host's name (MPI_Get_processor_name, or gethostname).
  const std::string& host() const { return host_; }
  // "Open MPI v4.1.4" or "" when not launched.
  const std::string& mpi_version() const { return mpi_version_; }

  // Collectives: every worker calls them in the same order. One that does
  // not complete within timeout_s (0: no limit) throws RuntimeError naming
  // this rank, `what`, the step and the byte count.
  // Rank 0's bytes to every worker.
  void broadcast(void* data, size_t bytes, const std::string& what, double timeout_s);
  // The sum over workers, in rank order (the same bits on every worker and run).
  void all_reduce_sum(float* data, int64_t count, const std::string& what, int64_t step, double timeout_s);
  // Every worker's string, by rank (each at most 4 KiB).
  std::vector<std::string> all_gather(const std::string& mine, double timeout_s);

  // Ends every worker of the job with `exit_code` (MPI_Abort); after an
  // error on one rank, so that the others never wait for it.
  [[noreturn]] void abort(int exit_code);

 private:
  Workers() = default;
  [[noreturn]] void fail(int status, const std::string& what, int64_t step, size_t bytes, double timeout_s,
                         const std::string& detail) const;

  const axon_mpi_api* api_ = nullptr;
  int rank_ = 0, size_ = 1;
  std::string host_, mpi_version_;
  bool finalize_ = false;
};

}  // namespace axon
