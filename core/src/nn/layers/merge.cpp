// The elementwise merge layers, in Keras' order of operations: Add (AddN),
// Subtract (Sub), Average (AddN, then a Scale by 1/n), Multiply and Maximum
// (a chain of Mul / Maximum from the first input on, whose partial results
// the backward reads). Gradients: Add passes dy on to every input, Subtract
// negates it for the second, Average scales it, Multiply and Maximum walk
// the chain back (MaximumGrad gives a tie to the earlier input, as
// TensorFlow's gradient does).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Merge::Merge(Kind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}

const char* Merge::type() const {
  switch (kind_) {
    case Kind::add: return "Add";
    case Kind::subtract: return "Subtract";
    case Kind::multiply: return "Multiply";
    case Kind::average: return "Average";
    case Kind::maximum: return "Maximum";
  }
  return "Add";
}

void Merge::write_config(KerasConfigWriter&) const {}

Shape Merge::output_shape(std::span<const Shape> in) const {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i] != in[0])
      throw UsageError("its inputs differ in shape: " + shape_string(in[0]) + " and " + shape_string(in[i]) +
                       " (axon merges inputs of one shape)");
  return in[0];
}

Tensor Merge::forward(std::span<const Tensor> in) {
  const size_t n = in.size();
  Tensor y = take_like(in[0]);
  x_.clear();
  partial_.clear();
  switch (kind_) {
    case Kind::add:
    case Kind::average: {
      std::vector<const Tensor*> xs;
      for (const Tensor& t : in) xs.push_back(&t);
      ops::add_n(xs, y, name());
      if (kind_ == Kind::average) ops::scale(y, y, 1.0f / static_cast<float>(n), name());
      break;
    }
    case Kind::subtract: ops::sub(in[0], in[1], y, name()); break;
    case Kind::multiply:
    case Kind::maximum: {
      Tensor p = in[0];
      for (size_t i = 1; i < n; ++i) {
        Tensor next = i + 1 == n ? y : take_like(in[0]);
        if (kind_ == Kind::multiply) ops::mul(p, in[i], next, name());
        else ops::maximum(p, in[i], next, name());
        if (remembers()) partial_.push_back(p);
        p = next;
      }
      if (remembers()) x_.assign(in.begin(), in.end());
      break;
    }
  }
  return y;
}

void Merge::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const size_t n = need_dx.size();
  switch (kind_) {
    case Kind::add:
      for (size_t i = 0; i < n; ++i)
        if (need_dx[i]) dx[i] = dy;
      break;
    case Kind::average: {
      Tensor g = take_like(dy);
      ops::scale(dy, g, 1.0f / static_cast<float>(n), name());
      for (size_t i = 0; i < n; ++i)
        if (need_dx[i]) dx[i] = g;
      break;
    }
    case Kind::subtract:
      if (need_dx[0]) dx[0] = dy;
      if (need_dx[1]) {
        dx[1] = take_like(dy);
        ops::scale(dy, dx[1], -1.0f, name());
      }
      break;
    case Kind::multiply:
    case Kind::maximum: {
      // g: the gradient of partial result i (y for the last).
      Tensor g = dy;
      for (size_t i = n - 1; i >= 1; --i) {
        const Tensor& p = partial_[i - 1];  // the left operand of step i
        bool earlier = false;               // whether any input before i needs a gradient
        for (size_t j = 0; j < i; ++j) earlier = earlier || need_dx[j];
        Tensor dp = earlier ? take_like(dy) : Tensor();
        if (kind_ == Kind::multiply) {
          if (need_dx[i]) {
            dx[i] = take_like(dy);
            ops::mul(g, p, dx[i], name());
          }
          if (earlier) ops::mul(g, x_[i], dp, name());
        } else {
          Tensor di = take_like(dy);
          if (!earlier) dp = take_like(dy);
          ops::maximum_grad(g, p, x_[i], dp, di, name());
          if (need_dx[i]) dx[i] = di;
        }
        if (!earlier) break;
        g = dp;
        if (i == 1 && need_dx[0]) dx[0] = g;
      }
      break;
    }
  }
  x_.clear();
  partial_.clear();
}

namespace {

template <Merge::Kind K>
std::unique_ptr<Layer> merge_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<Merge>(K, l.name());
}

const LayerEntry kAdd{"Add", merge_from_keras<Merge::Kind::add>, "(inputs of one shape)"};
const LayerEntry kSubtract{"Subtract", merge_from_keras<Merge::Kind::subtract>, "(two inputs of one shape)"};
const LayerEntry kMultiply{"Multiply", merge_from_keras<Merge::Kind::multiply>, "(inputs of one shape)"};
const LayerEntry kAverage{"Average", merge_from_keras<Merge::Kind::average>, "(inputs of one shape)"};
const LayerEntry kMaximum{"Maximum", merge_from_keras<Merge::Kind::maximum>, "(inputs of one shape)"};
const LayerRegistration kMergeRegistered[] = {LayerRegistration(kAdd), LayerRegistration(kSubtract),
                                              LayerRegistration(kMultiply), LayerRegistration(kAverage),
                                              LayerRegistration(kMaximum)};

}  // namespace
}  // namespace axon::nn
