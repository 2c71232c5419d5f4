// The default strategy: one replica; nothing to reduce or copy.
#include <axon/strategy.hpp>

namespace axon {
namespace {

class OneDeviceStrategy final : public Strategy {
 public:
  explicit OneDeviceStrategy(Device& device) : Strategy({&device}) {}
  std::string name() const override { return "default"; }
  std::string describe(int64_t global_batch) const override {
    return "Strategy default: batch " + std::to_string(global_batch) + " on " + replica_devices().front()->name();
  }
  void all_reduce(const std::vector<Tensor*>& buffers, const std::string&, int64_t) override { check_buffers(buffers); }
  void broadcast(const std::vector<Tensor*>& buffers, const std::string&) override { check_buffers(buffers); }
};

}  // namespace

std::unique_ptr<Strategy> make_one_device_strategy(Device& device) {
  return std::make_unique<OneDeviceStrategy>(device);
}

}  // namespace axon
