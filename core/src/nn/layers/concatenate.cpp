// Concatenate: ConcatV2 forward; backward, each input's part of dy (Slice).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Concatenate::Concatenate(int axis, std::string name) : Layer(std::move(name)), axis_(axis) {
  if (axis == 0) throw UsageError("Concatenate: axis 0 is the batch; axon joins along another axis");
}

void Concatenate::write_config(KerasConfigWriter& c) const { c.integer("axis", axis_); }

int Concatenate::per_sample_axis(size_t rank) const {
  // Keras counts the batch: axis 3 of an image is its channels, as -1 is.
  const int r = static_cast<int>(rank);
  const int a = axis_ < 0 ? r + axis_ : axis_ - 1;
  return a >= 0 && a < r ? a : -1;
}

Shape Concatenate::output_shape(std::span<const Shape> in) const {
  const int a = per_sample_axis(in[0].size());
  if (a < 0) throw UsageError("axis " + std::to_string(axis_) + " is outside its inputs " + shape_string(in[0]));
  Shape out = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    bool fits = in[i].size() == in[0].size();
    for (size_t d = 0; fits && d < in[0].size(); ++d) fits = static_cast<int>(d) == a || in[i][d] == in[0][d];
    if (!fits)
      throw UsageError("its inputs " + shape_string(in[0]) + " and " + shape_string(in[i]) +
                       " differ off the concatenation axis " + std::to_string(axis_));
    out[static_cast<size_t>(a)] += in[i][static_cast<size_t>(a)];
  }
  return out;
}

Tensor Concatenate::forward(std::span<const Tensor> in) {
  std::vector<const Tensor*> xs;
  for (const Tensor& t : in) xs.push_back(&t);
  Tensor y = take(in[0].dim(0), output_shape());
  ops::concat(xs, y, per_sample_axis(input_shape().size()) + 1, name());
  return y;
}

void Concatenate::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const int a = per_sample_axis(input_shape().size());
  std::vector<int64_t> begin(static_cast<size_t>(dy.rank()), 0);
  for (size_t i = 0; i < need_dx.size(); ++i) {
    if (need_dx[i]) {
      dx[i] = take(dy.dim(0), input_shapes()[i]);
      ops::slice(dy, dx[i], begin, name());
    }
    begin[static_cast<size_t>(a) + 1] += input_shapes()[i][static_cast<size_t>(a)];
  }
}

namespace {
std::unique_ptr<Layer> concatenate_from_keras(const KerasLayerConfig& l) {
  const int64_t axis = l.integer("axis", -8, 8, -1);
  if (axis == 0) l.fail("axis is 0, the batch; axon joins along another axis");
  return std::make_unique<Concatenate>(static_cast<int>(axis), l.name());
}
const LayerEntry kConcatenateEntry{"Concatenate", concatenate_from_keras, "axis (not the batch's)"};
const LayerRegistration kConcatenateRegistered(kConcatenateEntry);
}  // namespace
}  // namespace axon::nn
