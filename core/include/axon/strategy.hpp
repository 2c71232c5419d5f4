// Distribution strategies, with tf.distribute's semantics. A strategy says
// which devices of this process hold a replica of the model, how many
// processes (workers) take part, how each global batch is split over all
// replicas, and how buffers are summed over them (the all-reduce):
//   default       one device, one replica (OneDeviceStrategy)
//   mirrored      one replica per device of this process (MirroredStrategy)
//   multi-worker  processes started by mpirun, each mirroring over its own
//                 devices (MultiWorkerMirroredStrategy)
// Every replica divides its loss by the global batch and the gradients are
// summed, so a step equals a one-device step at the same global batch; the
// scaling is decided here and in the training loop, never in layers.
#pragma once

#include <axon/device.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace axon {

class Runtime;
class Workers;

class Strategy {
 public:
  virtual ~Strategy() = default;

  // "default", "mirrored", "multi-worker"
  virtual std::string name() const = 0;
  // This process's replica devices, in local replica order.
  const std::vector<Device*>& replica_devices() const { return devices_; }
  int num_local_replicas() const { return static_cast<int>(devices_.size()); }

  // Processes taking part; 1 and rank 0 inside one process.
  virtual int num_workers() const { return 1; }
  virtual int worker_rank() const { return 0; }
  // Only the chief prints progress and writes files.
  bool is_chief() const { return worker_rank() == 0; }
  // Replicas over all workers (tf.distribute's num_replicas_in_sync).
  virtual int num_replicas_in_sync() const { return num_local_replicas(); }
  // The index of local replica r among all replicas (rank 0's come first).
  virtual int global_replica_index(int local) const { return local; }

  // The samples [begin, end) that local replica r takes of a global batch of
  // n: consecutive parts by global replica index, as even as they go (the
  // first n % R replicas take one more), so a short last batch is split,
  // never dropped, and a replica may get none.
  std::pair<int64_t, int64_t> replica_slice(int64_t n, int local) const;
  // UsageError unless global_batch divides by num_replicas_in_sync(),
  // naming the nearest sizes that would.
  void check_global_batch(int64_t global_batch) const;
  // "Using MirroredStrategy with 2 replicas in sync (/device:CPU:0,
  // /device:CPU:1): global batch 64 = 32 per replica"
  virtual std::string describe(int64_t global_batch) const = 0;

  // Sums buffers (float32, one per local replica on its device, equal sizes)
  // over every replica of every worker, in place and in a fixed order: each
  // ends with the same bits, run after run. `what` and `step` name the
  // collective in errors.
  virtual void all_reduce(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step) = 0;
  // The gradients' all-reduce runs in buckets of about this many bytes, in
  // reverse layer order, each started as soon as backward has written it,
  // while backward goes on (PyTorch DDP's bucket_cap_mb); 0: one all-reduce
  // after backward. Read when a model is built.
  static constexpr int64_t kDefaultBucketBytes = int64_t{25} << 20;  // DDP's 25 MiB
  int64_t bucket_bytes() const { return bucket_bytes_; }
  void set_bucket_bytes(int64_t bytes);
  // Whether the strategy can queue the all-reduce on the devices
  // (all_reduce_queued): they have events and their plugin a queued
  // all-reduce (all_reduce_async among local replicas, comm_all_reduce_async
  // across workers with one replica each).
  virtual bool queues_all_reduce() const { return false; }
  // all_reduce, queued: replica i's share starts once ready[i] (an event of
  // its device) is reached, done[i] is recorded after it, and this returns
  // at once; an error found later comes back from the devices' waits.
  // Only where queues_all_reduce().
  virtual void all_reduce_queued(const std::vector<Tensor*>& buffers, const std::string& what, int64_t step,
                                 const std::vector<axon_event>& ready, const std::vector<axon_event>& done);
  // Whether a bucket's all-reduce may start while the replicas still
  // compute: where it is queued on the devices between events, or where the
  // devices' kernels finish before they return and their memory is the
  // host's (the CPU plugin's), so that another host thread may sum what they
  // wrote (MPI across workers).
  bool overlaps_backward() const;
  // Copies global replica 0's buffer into every other replica's.
  virtual void broadcast(const std::vector<Tensor*>& buffers, const std::string& what) = 0;
  // Makes `bytes` on every worker what the chief holds (a checkpoint the
  // chief read); within one process there is nothing to do.
  virtual void broadcast_bytes(std::string& bytes, const std::string& what) { (void)bytes, (void)what; }
  // Whether `mine` is true on any worker (a stop request): every worker
  // calls it at the same step and gets the same answer.
  virtual bool any_worker(bool mine, const std::string& what, int64_t step) {
    (void)what, (void)step;
    return mine;
  }

 protected:
  explicit Strategy(std::vector<Device*> devices);
  void check_buffers(const std::vector<Tensor*>& buffers) const;
  // Copies local replica 0's buffer to the other local replicas.
  void copy_to_local_replicas(const std::vector<Tensor*>& buffers) const;

 private:
  std::vector<Device*> devices_;
  int64_t bucket_bytes_ = kDefaultBucketBytes;
};

// Everything on one device.
std::unique_ptr<Strategy> make_one_device_strategy(Device& device);

// One replica per device of `devices`, gradients summed by the devices'
// plugin (CPU: in process; CUDA: NCCL). UsageError when the devices come from
// different plugins (naming them) or their plugin has no all-reduce.
std::unique_ptr<Strategy> make_mirrored_strategy(std::vector<Device*> devices);

// One worker of an mpirun job, mirroring over `devices`. Gradients are summed
// over local replicas by their plugin, then over workers by NCCL where the
// plugin offers a cross-process communicator (GPUs), else by MPI on the host
// in rank order. Collectives fail after collective_timeout_s (0: never).
std::unique_ptr<Strategy> make_multi_worker_strategy(std::vector<Device*> devices, Workers& workers,
                                                     double collective_timeout_s);

// The devices mirrored and multi-worker replicate over: every visible device
// named by --visible-devices / AXON_VISIBLE_DEVICES when set, else every
// visible device of the highest-priority type (all GPUs; without one, the
// logical CPU devices of --cpu-devices).
std::vector<Device*> mirrored_devices(const Runtime& runtime);

// The strategy names accepted by --strategy.
std::vector<std::string> strategy_names();

}  // namespace axon
