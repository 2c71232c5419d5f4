// The call floor (see call_floor.hpp).
#include "call_floor.hpp"

#include <axon/dispatch.hpp>
#include <axon/ops.hpp>
#include <axon/profile.hpp>

#include <algorithm>
#include <limits>

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

}  // namespace axon::bench
