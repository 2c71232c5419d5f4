// The elementwise merge layers, in Keras' order of operations: Add (AddN),
// Subtract (Sub), Average (AddN, then a Scale by 1/n), Multiply and Maximum
// (a chain of Mul / Maximum from the first input on, whose partial results
// the backward reads), Minimum (Maximum's chain over the negated inputs,
// negated: min(a, b) = -max(-a, -b), exactly). Gradients: Add passes dy on
// to every input, Subtract negates it for the second, Average scales it,
// Multiply and Maximum walk the chain back (MaximumGrad gives a tie to the
// earlier input, as TensorFlow's gradient does; so does Minimum's, through
// the negation: -a >= -b where a <= b, TensorFlow's tie for Minimum).
// Inputs may differ in shape where Keras broadcasts them (a squeeze-and-
// excitation gate [C] or [1, 1, C] against [H, W, C]): aligned at their last
// axis, each size equal to the others' or 1. Such an input is repeated to the
// output's shape first (ConcatV2 of copies, an op every device has), and its
// gradient is the output-shaped one summed over the repeated axes (ReduceSum,
// TensorFlow's gradient of a broadcast).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>

namespace axon::nn {

Merge::Merge(Kind kind, std::string name) : Layer(std::move(name)), kind_(kind) {}

const char* Merge::type() const {
  switch (kind_) {
    case Kind::add: return "Add";
    case Kind::subtract: return "Subtract";
    case Kind::multiply: return "Multiply";
    case Kind::average: return "Average";
    case Kind::maximum: return "Maximum";
    case Kind::minimum: return "Minimum";
  }
  return "Add";
}

void Merge::write_config(KerasConfigWriter&) const {}

Shape Merge::output_shape(std::span<const Shape> in) const {
  size_t rank = 0;
  for (const Shape& s : in) rank = std::max(rank, s.size());
  // Size k of `s` counted from its end (1 beyond its first axis).
  auto from_end = [](const Shape& s, size_t k) { return k < s.size() ? s[s.size() - 1 - k] : int64_t{1}; };
  Shape out(rank, 1);
  for (size_t i = 0; i < in.size(); ++i)
    for (size_t k = 0; k < rank; ++k) {
      const int64_t d = from_end(in[i], k);
      int64_t& o = out[rank - 1 - k];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      size_t j = 0;  // the earlier input that set o
      while (from_end(in[j], k) != o) ++j;
      throw UsageError("its inputs differ in shape: " + shape_string(in[j]) + " and " + shape_string(in[i]) +
                       " (axon merges inputs whose sizes are equal or 1, aligned at the last axis, as Keras)");
    }
  return out;
}

bool Merge::broadcasts() const {
  for (const Shape& s : input_shapes())
    if (s != output_shape()) return true;
  return false;
}

Tensor Merge::broadcast(const Tensor& x) const {
  const Shape& out = output_shape();
  const size_t rank = out.size() + 1, lead = rank - static_cast<size_t>(x.rank());
  Shape s(rank, 1);
  s[0] = x.dim(0);
  for (size_t a = 1; a < static_cast<size_t>(x.rank()); ++a) s[lead + a] = x.dim(static_cast<int>(a));
  Tensor t = x.reshaped(s);
  // The last axis first: each copy is then as small as it can be.
  for (size_t a = rank - 1; a >= 1; --a) {
    if (s[a] == out[a - 1]) continue;
    s[a] = out[a - 1];
    Tensor wide = take(s[0], Shape(s.begin() + 1, s.end()));
    const std::vector<const Tensor*> copies(static_cast<size_t>(s[a]), &t);
    ops::concat(copies, wide, static_cast<int>(a), name());
    t = wide;
  }
  return t;
}

Tensor Merge::sum_to_input(const Tensor& g, size_t i) const {
  const Shape& in = input_shapes()[i];
  const Shape& out = output_shape();
  const size_t lead = out.size() - in.size();
  std::vector<int> axes;
  Shape kept(out);
  for (size_t a = 0; a < out.size(); ++a)
    if ((a < lead || in[a - lead] == 1) && out[a] != 1) {
      axes.push_back(static_cast<int>(a) + 1);
      kept[a] = 1;
    }
  Shape shape{g.dim(0)};
  shape.insert(shape.end(), in.begin(), in.end());
  if (axes.empty()) return g.reshaped(std::move(shape));
  Tensor sum = take(g.dim(0), kept);
  ops::reduce_sum(g, sum, ops::reduce_attrs(axes, true), name());
  return sum.reshaped(std::move(shape));
}

Tensor Merge::forward(std::span<const Tensor> given) {
  std::vector<Tensor> in;  // each input at the output's shape (negated for Minimum)
  for (const Tensor& t : given) in.push_back(broadcasts() ? broadcast(t) : t);
  if (kind_ == Kind::minimum)
    for (Tensor& t : in) {
      Tensor negated = take_like(t);
      ops::scale(t, negated, -1.0f, name());
      t = negated;
    }
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
    case Kind::maximum:
    case Kind::minimum: {
      Tensor p = in[0];
      for (size_t i = 1; i < n; ++i) {
        Tensor next = i + 1 == n ? y : take_like(in[0]);
        if (kind_ == Kind::multiply) ops::mul(p, in[i], next, name());
        else ops::maximum(p, in[i], next, name());
        if (remembers()) partial_.push_back(p);
        p = next;
      }
      if (remembers()) x_.assign(in.begin(), in.end());
      if (kind_ == Kind::minimum) ops::scale(y, y, -1.0f, name());
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
    case Kind::maximum:
    case Kind::minimum: {
      // g: the gradient of partial result i (y for the last; for Minimum,
      // of the negated chain's, whose inputs' gradients are negated back
      // below).
      Tensor g = dy;
      if (kind_ == Kind::minimum) {
        g = take_like(dy);
        ops::scale(dy, g, -1.0f, name());
      }
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
      if (kind_ == Kind::minimum)  // each a tensor of its own
        for (size_t i = 0; i < n; ++i)
          if (need_dx[i]) ops::scale(dx[i], dx[i], -1.0f, name());
      break;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (need_dx[i] && input_shapes()[i] != output_shape()) dx[i] = sum_to_input(dx[i], i);
  x_.clear();
  partial_.clear();
}

namespace {

template <Merge::Kind K>
std::unique_ptr<Layer> merge_from_keras(const KerasLayerConfig& l) {
  return std::make_unique<Merge>(K, l.name());
}

const LayerEntry kAdd{"Add", merge_from_keras<Merge::Kind::add>, "(inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerEntry kSubtract{"Subtract", merge_from_keras<Merge::Kind::subtract>,
                           "(two inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerEntry kMultiply{"Multiply", merge_from_keras<Merge::Kind::multiply>,
                           "(inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerEntry kAverage{"Average", merge_from_keras<Merge::Kind::average>,
                          "(inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerEntry kMaximum{"Maximum", merge_from_keras<Merge::Kind::maximum>,
                          "(inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerEntry kMinimum{"Minimum", merge_from_keras<Merge::Kind::minimum>,
                          "(inputs whose sizes are equal or 1, aligned at the last axis)"};
const LayerRegistration kMergeRegistered[] = {LayerRegistration(kAdd),     LayerRegistration(kSubtract),
                                              LayerRegistration(kMultiply), LayerRegistration(kAverage),
                                              LayerRegistration(kMaximum),  LayerRegistration(kMinimum)};

}  // namespace
}  // namespace axon::nn
