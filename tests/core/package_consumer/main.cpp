// Lists the devices and runs one op on each that has a Relu kernel, through
// the installed axon::core alone.
#include <axon/ops.hpp>
#include <axon/runtime.hpp>

#include <cstdio>
#include <vector>

int main() {
  try {
    axon::Runtime& rt = axon::Runtime::init(axon::Config::from_environment());
    for (axon::Device* d : rt.devices()) {
      std::vector<float> x{-1, 2};
      axon::Tensor t = axon::Tensor::from_vector<float>(*d, AXON_FLOAT32, {2}, x);
      axon::Tensor y(*d, AXON_FLOAT32, {2});
      axon::DeviceScope scope(*d);
      axon::ops::relu(t, y);
      std::vector<float> r = y.to_vector<float>();
      std::printf("%s relu(-1,2) = %g,%g\n", d->name().c_str(), r[0], r[1]);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "axon-consumer: error: %s\n", e.what());
    return 1;
  }
}
