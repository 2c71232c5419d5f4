// MultiWorkerMirroredStrategy: one worker per process of an mpirun job, each
// mirroring over its own devices. A step's gradients are summed over the
// local replicas by their plugin, then over workers on local replica 0 (NCCL
// where the plugin offers a cross-process communicator, else MPI on the host
// in rank order), then copied to the other local replicas. Fixed orders
// throughout, so reruns give the same bits.
#include "collective_messages.hpp"
#include "plugin_collectives.hpp"

#include <axon/error.hpp>
#include <axon/strategy.hpp>
#include <axon/workers.hpp>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace axon {
namespace {

// What one worker replicates on, as gathered from every worker.
struct WorkerInfo {
  std::string host, plugin, devices;
  bool nccl = false;
  int replicas = 0;
};

WorkerInfo parse(const std::string& s) {
  WorkerInfo w;
  std::istringstream in(s);
  std::string nccl, replicas;
  std::getline(in, w.host, '\t');
  std::getline(in, w.plugin, '\t');
  std::getline(in, nccl, '\t');
  std::getline(in, replicas, '\t');
  std::getline(in, w.devices);
  w.nccl = nccl == "1";
  w.replicas = std::atoi(replicas.c_str());
  return w;
}

bool has_communicator(const axon_collective_api* c) {
  return c != nullptr && c->comm_get_id != nullptr && c->comm_create != nullptr && c->comm_all_reduce != nullptr &&
         c->comm_destroy != nullptr;
}

class MultiWorkerStrategy final : public Strategy {
 public:
  MultiWorkerStrategy(std::vector<Device*> devices, Workers& workers, double timeout_s)
      : Strategy(std::move(devices)), workers_(workers), timeout_s_(timeout_s) {
    distribute::check_one_plugin(replica_devices(), "--strategy multi-worker");
    Device& first = *replica_devices().front();
    const bool nccl = has_communicator(first.collectives());
    std::string names;
    for (Device* d : replica_devices()) names += (names.empty() ? "" : ", ") + d->name();
    const std::string mine = workers.host() + "\t" + first.plugin_name() + "\t" + (nccl ? "1" : "0") + "\t" +
                             std::to_string(num_local_replicas()) + "\t" + names;
    for (const std::string& s : workers.all_gather(mine, timeout_s)) workers_info_.push_back(parse(s));

    // Every worker must reduce the same way, or the collectives would not meet.
    for (const WorkerInfo& w : workers_info_) {
      if (w.plugin == workers_info_[0].plugin && w.nccl == workers_info_[0].nccl) continue;
      std::string list;
      for (size_t r = 0; r < workers_info_.size(); ++r)
        list += (r ? "; rank " : "rank ") + std::to_string(r) + " on " + workers_info_[r].host + ": plugin " +
                workers_info_[r].plugin + " (" + workers_info_[r].devices + ")";
      throw UsageError("--strategy multi-worker: the workers replicate on different plugins: " + list +
                       "; give every worker devices of one kind (--visible-devices)");
    }
    for (const WorkerInfo& w : workers_info_) {
      first_replica_.push_back(replicas_in_sync_);
      replicas_in_sync_ += w.replicas;
    }
    if (nccl) create_communicator(first);
  }

  ~MultiWorkerStrategy() override {
    if (comm_ != nullptr) replica_devices().front()->collectives()->comm_destroy(comm_);
  }

  std::string name() const override { return "multi-worker"; }
  int num_workers() const override { return workers_.size(); }
  int worker_rank() const override { return workers_.rank(); }
  int num_replicas_in_sync() const override { return replicas_in_sync_; }
  int global_replica_index(int local) const override { return first_replica_[static_cast<size_t>(worker_rank())] + local; }

  std::string describe(int64_t global_batch) const override {
    const int n = num_replicas_in_sync(), w = num_workers();
    std::string s = "Using MultiWorkerMirroredStrategy with " + std::to_string(n) + " replica" + (n == 1 ? "" : "s") +
                    " in sync (" + std::to_string(w) + " worker" + (w == 1 ? "" : "s");
    for (size_t r = 0; r < workers_info_.size(); ++r)
      s += (r ? "; rank " : ": rank ") + std::to_string(r) + " on " + workers_info_[r].host + ": " +
           workers_info_[r].devices;
    s += "): global batch " + std::to_string(global_batch) + " = " + std::to_string(global_batch / n) + " per replica; ";
    if (comm_ != nullptr) return s + "gradients summed over workers by NCCL";
    if (w == 1) return s + "one worker: nothing to sum across workers";
    return s + "gradients summed over workers by MPI (" + workers_.mpi_version() + ") in rank order";
  }

  void all_reduce(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step) override {
    check_buffers(buffers);
    if (num_local_replicas() > 1) distribute::plugin_all_reduce(replica_devices(), buffers, what, step);
    Tensor& first = *buffers.front();
    if (comm_ != nullptr) {
      axon_error err{};
      err.struct_size = sizeof err;
      const axon_status s = replica_devices().front()->collectives()->comm_all_reduce(
          comm_, first.data(), first.numel(), AXON_FLOAT32, AXON_REDUCE_SUM, timeout_ms(), &err);
      if (s != AXON_OK) throw failed(s, what, first, step, err);
    } else if (num_workers() > 1 && first.device().host_memory()) {
      // Summed in place: no copy of the gradients through a staging buffer.
      first.device().synchronize();
      workers_.all_reduce_sum(static_cast<float*>(first.data()), first.numel(), what, step, timeout_s_);
    } else if (num_workers() > 1) {
      staging_.resize(static_cast<size_t>(first.numel()));
      first.copy_to_host(staging_.data(), first.bytes());
      workers_.all_reduce_sum(staging_.data(), first.numel(), what, step, timeout_s_);
      first.copy_from_host(staging_.data(), first.bytes());
    }
    copy_to_local_replicas(buffers);
  }

  // One replica per worker summed by NCCL: queued on the communication
  // stream between events (several local replicas go through the host).
  bool queues_all_reduce() const override {
    const axon_collective_api* c = replica_devices().front()->collectives();
    return comm_ != nullptr && num_local_replicas() == 1 && c->comm_all_reduce_async != nullptr &&
           replica_devices().front()->has_events();
  }

  void all_reduce_queued(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step,
                         const std::vector<axon_event>& ready, const std::vector<axon_event>& done) override {
    check_buffers(buffers);
    if (!queues_all_reduce() || ready.size() != 1 || done.size() != 1)
      throw RuntimeError("multi-worker cannot queue the all-reduce of " + what);
    Tensor& first = *buffers.front();
    axon_error err{};
    err.struct_size = sizeof err;
    const axon_status s = replica_devices().front()->collectives()->comm_all_reduce_async(
        comm_, first.data(), first.numel(), AXON_FLOAT32, AXON_REDUCE_SUM, ready[0], done[0], timeout_ms(), &err);
    if (s != AXON_OK) throw failed(s, what, first, step, err);
  }

  void broadcast(const std::vector<Tensor*>& buffers, const std::string& what) override {
    check_buffers(buffers);
    if (num_workers() > 1) {
      Tensor& first = *buffers.front();
      staging_.resize(static_cast<size_t>(first.numel()));
      first.copy_to_host(staging_.data(), first.bytes());
      workers_.broadcast(staging_.data(), first.bytes(), what, timeout_s_);
      if (worker_rank() != 0) first.copy_from_host(staging_.data(), first.bytes());
    }
    copy_to_local_replicas(buffers);
  }

  void broadcast_bytes(std::string& bytes, const std::string& what) override {
    if (num_workers() == 1) return;
    uint64_t n = bytes.size();
    workers_.broadcast(&n, sizeof n, what + " (its size)", timeout_s_);
    if (n > (uint64_t{1} << 32)) throw RuntimeError("rank 0 sent " + std::to_string(n) + " bytes of " + what);
    bytes.resize(static_cast<size_t>(n));
    if (n > 0) workers_.broadcast(bytes.data(), bytes.size(), what, timeout_s_);
  }

  bool any_worker(bool mine, const std::string& what, int64_t step) override {
    if (num_workers() == 1) return mine;
    float flag = mine ? 1.0f : 0.0f;
    workers_.all_reduce_sum(&flag, 1, what, step, timeout_s_);
    return flag > 0;
  }

 private:
  int32_t timeout_ms() const { return static_cast<int32_t>(std::min(timeout_s_ * 1000, 2147483647.0)); }

  // The cross-worker all-reduce of `what` failed (or timed out).
  RuntimeError failed(axon_status s, const std::string& what, const Tensor& buffer, int64_t step,
                      const axon_error& err) const {
    const std::string where = "rank " + std::to_string(worker_rank()) + ": all-reduce of " + what + " (" +
                              distribute::byte_count(buffer.bytes()) + ") at step " + std::to_string(step);
    if (s == AXON_DEADLINE_EXCEEDED)
      return RuntimeError(distribute::timed_out(where, timeout_s_) + " (" + err.message + ")");
    return RuntimeError(where + " failed: " + err.message);
  }

  // One NCCL rank per worker (its local replica 0): rank 0 makes the unique
  // id and MPI carries it to the others.
  void create_communicator(Device& device) {
    const axon_collective_api& c = *device.collectives();
    unsigned char id[AXON_COMM_ID_CAPACITY + sizeof(uint64_t)] = {};
    size_t id_size = AXON_COMM_ID_CAPACITY;
    axon_error err{};
    err.struct_size = sizeof err;
    if (worker_rank() == 0) {
      if (c.comm_get_id(device.plugin_api().plugin_ctx, id + sizeof(uint64_t), &id_size, &err) != AXON_OK)
        throw RuntimeError("rank 0: cannot make a communicator id: " + std::string(err.message));
      const uint64_t n = id_size;
      std::memcpy(id, &n, sizeof n);
    }
    workers_.broadcast(id, sizeof id, "the communicator id", timeout_s_);
    uint64_t n = 0;
    std::memcpy(&n, id, sizeof n);
    if (n > AXON_COMM_ID_CAPACITY) throw RuntimeError("communicator id of " + std::to_string(n) + " bytes");
    if (c.comm_create(device.api().device_ctx, id + sizeof(uint64_t), static_cast<size_t>(n), worker_rank(),
                      num_workers(), &comm_, &err) != AXON_OK)
      throw RuntimeError("rank " + std::to_string(worker_rank()) + ": cannot join the communicator on " +
                         device.name() + ": " + err.message);
  }

  Workers& workers_;
  double timeout_s_;
  std::vector<WorkerInfo> workers_info_;
  std::vector<int> first_replica_;  // global index of each worker's first replica
  int replicas_in_sync_ = 0;
  void* comm_ = nullptr;
  std::vector<float> staging_;
};

}  // namespace

std::unique_ptr<Strategy> make_multi_worker_strategy(std::vector<Device*> devices, Workers& workers,
                                                     double collective_timeout_s) {
  return std::make_unique<MultiWorkerStrategy>(std::move(devices), workers, collective_timeout_s);
}

}  // namespace axon
