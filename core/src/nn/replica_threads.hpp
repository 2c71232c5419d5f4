// Runs one function per replica at once, each on a host thread of its own
// (replica 0 on the caller's, unless the caller keeps its thread for other
// work alongside: the overlapped all-reduce), so every replica's device
// stays busy. The
// threads start once and wait between calls; they poll briefly first,
// because a training step hands work over twice and waking a sleeping
// thread costs more than the poll.
#pragma once

#include <axon/error.hpp>

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace axon::nn {

// What a replica throws when it stops only because another one failed (a
// collective it waited in was aborted): run() reports the other's error.
class PeerFailed : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};

class ReplicaThreads {
 public:
  // caller_free: every replica gets a thread of its own, for runs with
  // `alongside` on the caller's; a run without takes replica 0 on the caller's.
  explicit ReplicaThreads(int replicas, bool caller_free = false);
  ~ReplicaThreads();
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;

  int size() const { return replicas_; }
  // Calls f(r) for every replica r concurrently and returns when all have
  // returned; then rethrows the exception of the lowest replica that threw
  // on its own (not PeerFailed), else the lowest PeerFailed.
  void run(const std::function<void(int)>& f);
  // With caller_free: alongside() on the calling thread while the replicas
  // run; its exception comes after a replica's own and before PeerFailed.
  void run(const std::function<void(int)>& f, const std::function<void()>& alongside);
  // Seconds each replica spent in f during the last run, and the run's wall
  // time (the difference is time spent waiting for the slowest replica).
  const std::vector<double>& busy_seconds() const { return busy_; }
  double wall_seconds() const { return wall_; }

 private:
  void call(int r);
  void worker(int r);
  void stop() noexcept;

  int replicas_;
  int first_thread_;  // the first replica with a thread of its own (0 or 1)
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> running_{0};
  std::atomic<bool> stop_{false};
  bool caller_takes_first_ = false;  // this run's replica 0 is the caller's (set before the workers wake)
  std::vector<double> busy_;
  std::vector<std::exception_ptr> errors_;
  double wall_ = 0;
};

}  // namespace axon::nn
