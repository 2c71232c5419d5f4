// A model copy's weights on one device as flat buffers: one for all weight
// values (the trainable ones first, then the non-trainable ones such as
// batch normalisation's moving statistics), one for the trainable weights'
// gradients (plus a few extra floats the training loop reduces with them),
// and the optimizer's state likewise. Each Parameter's value and grad become
// views into them. So a step needs one all-reduce and one update whatever the
// number of layers, and a replica is copied to another device with one
// transfer.
#pragma once

#include <axon/nn/layer.hpp>

#include <cstdint>
#include <vector>

namespace axon::nn {

class ParameterBuffers {
 public:
  // Parameters start at multiples of this many floats (256 bytes): every
  // backend's vector loads and cuDNN/cuBLAS alignment hints hold for a view.
  static constexpr int64_t kAlignFloats = 64;

  // Moves `params` (float32, all on `device`) into new flat buffers, keeping
  // their current values; gradients start at zero. `extra_grad_floats` more
  // floats follow the parameters in the gradient buffer (extra()).
  void bind(const std::vector<Parameter*>& params, Device& device, int64_t extra_grad_floats = 0);
  bool bound() const { return values_.defined(); }

  // Padded length of the trainable part; the padding is zero in every buffer
  // and stays zero (its gradient is zero, so every optimizer leaves it there).
  int64_t trainable_floats() const { return trainable_floats_; }
  // Every weight value: the trainable part, then the non-trainable part.
  Tensor& values() { return values_; }
  // The trainable part of values() (what the optimizer updates).
  Tensor& trainable_values() { return trainable_values_; }
  // The whole gradient buffer: the trainable weights', then the extra floats.
  Tensor& gradients() { return gradients_; }
  // The weights' part of the gradient buffer (what the optimizer reads).
  const Tensor& parameter_gradients() const { return parameter_gradients_; }
  Tensor& parameter_gradients() { return parameter_gradients_; }
  // The extra floats of the gradient buffer.
  Tensor& extra() { return extra_; }
  // Where each parameter starts in values() (in floats), in the order bind()
  // was given them (what a checkpoint needs to slice values, m and v).
  const std::vector<int64_t>& offsets() const { return offsets_; }
  // Where each trainable parameter's span ends in trainable_values(), its
  // padding included, in buffer order (the last is trainable_floats()): the
  // variables Keras clips one by one.
  std::vector<int64_t> trainable_segment_ends() const;

 private:
  std::vector<int64_t> offsets_;
  int64_t trainable_floats_ = 0;
  Tensor values_, trainable_values_, gradients_, parameter_gradients_, extra_;
};

}  // namespace axon::nn
