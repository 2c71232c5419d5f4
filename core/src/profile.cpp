// Per-op wall-time totals (see axon/profile.hpp).
#include <axon/profile.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <utility>

namespace axon {
namespace {

std::atomic<bool> g_on{false};
std::mutex g_mutex;
std::map<std::pair<std::string, std::string>, OpTime>& table() {
  static auto* t = new std::map<std::pair<std::string, std::string>, OpTime>();  // outlives static destruction
  return *t;
}

}  // namespace

void set_op_profiling(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool op_profiling() { return g_on.load(std::memory_order_relaxed); }

void record_op_time(const char* op, const std::string& device, double seconds, const OpCost& cost) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OpTime& t = table()[{op, device}];
  if (t.calls == 0) {
    t.op = op;
    t.device = device;
  }
  t.calls += 1;
  t.seconds += seconds;
  t.flops += cost.flops;
  t.bytes += cost.bytes;
}

std::vector<OpTime> op_times() {
  std::vector<OpTime> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [key, t] : table()) out.push_back(t);
  }
  std::stable_sort(out.begin(), out.end(), [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}

void reset_op_times() {
  std::lock_guard<std::mutex> lock(g_mutex);
  table().clear();
}

}  // namespace axon
