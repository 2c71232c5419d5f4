#include <axon/error.hpp>
#include <axon/nn/layer.hpp>

namespace axon::nn {

const char* activation_name(Activation a) { return a == Activation::relu ? "relu" : "linear"; }

Shape Layer::build(const Shape& input_shape, Device& device, Rng& rng) {
  input_shape_ = input_shape;
  output_shape_ = do_build(input_shape, device, rng);
  device_ = &device;
  return output_shape_;
}

Device& Layer::device() const {
  if (device_ == nullptr) throw RuntimeError("layer " + name_ + " is used before it is built");
  return *device_;
}

int64_t Layer::parameter_count() {
  int64_t n = 0;
  for (Parameter* p : parameters()) n += p->value.numel();
  return n;
}

Tensor& Layer::buffer(int slot, int64_t n, const Shape& per_sample, axon_dtype dtype) {
  auto key = std::make_pair(slot, n);
  auto it = buffers_.find(key);
  if (it == buffers_.end()) {
    Shape s{n};
    s.insert(s.end(), per_sample.begin(), per_sample.end());
    it = buffers_.emplace(key, Tensor(device(), dtype, std::move(s))).first;
  }
  return it->second;
}

const Tensor& Layer::none() {
  static const Tensor empty;
  return empty;
}

}  // namespace axon::nn
