// The call floor (see call_floor.hpp).
#include "call_floor.hpp"

#include <axon/dispatch.hpp>
#include <axon/ops.hpp>
#include <axon/profile.hpp>

#include "stream_rate.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace axon::bench {

double call_floor_seconds(Device& device, int calls, int rounds) {
  DeviceScope scope(device);
  const float one = 1.0f;
  const Tensor x = Tensor::from_vector<float>(device, AXON_FLOAT32, {1}, std::span<const float>(&one, 1));
  Tensor y(device, AXON_FLOAT32, {1});
  const bool was_on = op_profiling();
  set_op_profiling(true);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < rounds; ++r) {
    reset_op_times();
    for (int i = 0; i < calls; ++i) ops::scale(x, y, 0.5f, "call floor");
    for (const OpTime& t : op_times())
      if (t.calls > 0) best = std::min(best, t.seconds / static_cast<double>(t.calls));
  }
  reset_op_times();
  set_op_profiling(was_on);
  return best;
}

ColdCalls cold_call_seconds(Device& device, int calls) {
  DeviceScope scope(device);
  const std::vector<float> values(640, 0.5f);
  const std::vector<int32_t> classes(64, 3);
  const Tensor x = Tensor::from_vector<float>(device, AXON_FLOAT32, {1}, std::span<const float>(values.data(), 1));
  Tensor y(device, AXON_FLOAT32, {1});
  const Tensor logits = Tensor::from_vector<float>(device, AXON_FLOAT32, {64, 10}, std::span<const float>(values));
  const Tensor labels = Tensor::from_vector<int32_t>(device, AXON_INT32, {64}, std::span<const int32_t>(classes));
  Tensor loss(device, AXON_FLOAT32, {64}), dlogits(device, AXON_FLOAT32, {64, 10});
  // Each pass writes every line of it: the sweep takes the place, in every
  // cache, of the calls' code and data.
  std::vector<char> sweep(static_cast<size_t>(2 * std::max<int64_t>(last_level_cache_bytes(), int64_t{32} << 20)));
  const bool was_on = op_profiling();
  set_op_profiling(true);
  auto median_cold = [&](auto&& call) {
    std::vector<double> seconds;
    for (int i = 0; i < calls; ++i) {
      for (size_t j = 0; j < sweep.size(); j += 64) ++sweep[j];
      reset_op_times();
      call();
      for (const OpTime& t : op_times())
        if (t.calls > 0) seconds.push_back(t.seconds / static_cast<double>(t.calls));
    }
    if (seconds.empty()) return 0.0;
    std::nth_element(seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2), seconds.end());
    return seconds[seconds.size() / 2];
  };
  ColdCalls c;
  c.scale_seconds = median_cold([&] { ops::scale(x, y, 0.5f, "cold call"); });
  c.loss_seconds = median_cold([&] { ops::sparse_softmax_cross_entropy(logits, labels, loss, dlogits, "cold call"); });
  reset_op_times();
  set_op_profiling(was_on);
  return c;
}

}  // namespace axon::bench
