// Per-op wall-time totals (see axon/profile.hpp).
#include <axon/profile.hpp>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace axon {
namespace {

std::atomic<bool> g_on{false};
std::mutex g_mutex;
using Key = std::tuple<std::string, std::string, std::string>;  // op, device, layer
std::map<Key, OpTime, std::less<>>& table() {
  static auto* t = new std::map<Key, OpTime, std::less<>>();  // outlives static destruction
  return *t;
}

std::vector<OpTime> largest_first(std::vector<OpTime> out) {
  std::stable_sort(out.begin(), out.end(), [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  return out;
}

void add_to(OpTime& t, const OpTime& part) {
  t.calls += part.calls;
  t.seconds += part.seconds;
  t.flops += part.flops;
  t.bytes += part.bytes;
}

}  // namespace

void set_op_profiling(bool on) { g_on.store(on, std::memory_order_relaxed); }
bool op_profiling() { return g_on.load(std::memory_order_relaxed); }

void record_op_time(const char* op, const std::string& device, std::string_view layer, double seconds,
                    const OpCost& cost) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OpTime& t = table()[Key{op, device, layer}];
  if (t.calls == 0) {
    t.op = op;
    t.device = device;
    t.layer = layer;
  }
  t.calls += 1;
  t.seconds += seconds;
  t.flops += cost.flops;
  t.bytes += cost.bytes;
}

std::vector<OpTime> op_times() {
  std::map<std::pair<std::string, std::string>, OpTime> by_op;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [key, t] : table()) {
      OpTime& sum = by_op[{t.op, t.device}];
      sum.op = t.op;
      sum.device = t.device;
      add_to(sum, t);
    }
  }
  std::vector<OpTime> out;
  for (auto& [key, t] : by_op) out.push_back(std::move(t));
  return largest_first(std::move(out));
}

std::vector<OpTime> op_times_by_layer() {
  std::vector<OpTime> out;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    for (const auto& [key, t] : table()) out.push_back(t);
  }
  return largest_first(std::move(out));
}

void reset_op_times() {
  std::lock_guard<std::mutex> lock(g_mutex);
  table().clear();
}

}  // namespace axon
