// Keras initialisers, seeded: glorot_uniform for kernels, zeros for biases
// by default, or what a layer's config names (kernel_initializer="he_normal").
#pragma once

#include <axon/nn/random.hpp>
#include <axon/tensor.hpp>

#include <string>
#include <utility>
#include <vector>

namespace axon::nn {

// A Keras 3 initializer by its class and arguments, as a config names it:
// GlorotUniform, GlorotNormal, HeNormal, HeUniform, LecunNormal,
// LecunUniform and VarianceScaling (scale, mode, distribution), RandomNormal
// and TruncatedNormal (mean, stddev), RandomUniform (minval, maxval),
// Zeros, Ones, Constant (value), Orthogonal and Identity (gain). Keras' seed
// is not read: axon draws from its own seeded stream, the distribution
// Keras' (its bits are not).
struct KerasInitializer {
  std::string class_name = "Zeros";
  double scale = 1.0;                // VarianceScaling
  std::string mode = "fan_in";       // fan_in, fan_out, fan_avg
  std::string distribution = "truncated_normal";  // truncated_normal, untruncated_normal, uniform
  double mean = 0.0, stddev = 0.05;  // RandomNormal, TruncatedNormal
  double minval = -0.05, maxval = 0.05;  // RandomUniform
  double value = 0.0;                // Constant
  double gain = 1.0;                 // Orthogonal, Identity
  bool operator==(const KerasInitializer&) const = default;
};

// Keras' initializer of that class with its default arguments, or, for a
// class axon lacks, nullopt... (throws UsageError listing those it has).
KerasInitializer keras_initializer(const std::string& class_name);
// The classes keras_initializer takes, for messages and docs.
const char* keras_initializer_names();
// Empty where `init` can draw a weight of `shape`, else why not (Identity
// takes 2-D weights only, Orthogonal 2-D or larger: Keras' rules).
std::string initializer_shape_error(const KerasInitializer& init, const Shape& shape);
// Values for a weight of `shape` drawn as `init` says (fans as Keras
// computes them: a rank-1 weight's fan is its size).
std::vector<float> initial_values(const KerasInitializer& init, const Shape& shape, Rng& rng);

// Keras' fan computation: [in, out] for Dense; [kh, kw, in, out] (HWIO) for
// Conv2D, where each fan is multiplied by the receptive field kh * kw.
std::pair<double, double> compute_fans(const Shape& shape);

// U(-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)).
std::vector<float> glorot_uniform(const Shape& shape, Rng& rng);

// A new tensor on `device` holding `values`.
Tensor make_tensor(Device& device, const Shape& shape, const std::vector<float>& values);
Tensor zeros(Device& device, const Shape& shape);

}  // namespace axon::nn
