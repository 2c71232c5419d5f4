// Keras initialisers, seeded: glorot_uniform for kernels, zeros for biases.
#pragma once

#include <axon/nn/random.hpp>
#include <axon/tensor.hpp>

#include <utility>
#include <vector>

namespace axon::nn {

// Keras' fan computation: [in, out] for Dense; [kh, kw, in, out] (HWIO) for
// Conv2D, where each fan is multiplied by the receptive field kh * kw.
std::pair<double, double> compute_fans(const Shape& shape);

// U(-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)).
std::vector<float> glorot_uniform(const Shape& shape, Rng& rng);

// A new tensor on `device` holding `values`.
Tensor make_tensor(Device& device, const Shape& shape, const std::vector<float>& values);
Tensor zeros(Device& device, const Shape& shape);

}  // namespace axon::nn
