// The losses of ABI 1.7 and BinaryAccuracy on axon's own CUDA kernels
// (losses.cu); the label smoothing's constants in float32 here, as the CPU
// plugin and Keras compute them.
#include "losses.hpp"
#include "cuda_device.hpp"

#include <axon/keras_numbers.hpp>

namespace axon::cuda {
namespace {

void categorical_crossentropy(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const int64_t classes = c.input(0).dim(1);
  const launch::Crossentropy s{a.from_logits, sdk::keras_one_minus(a.label_smoothing),
                               a.label_smoothing / static_cast<float>(classes)};
  launch::categorical_crossentropy(d.stream(), s, c.input(0).data<float>(), c.input(1).data<int32_t>(),
                                   c.input(0).dim(0), classes, c.output(0).data<float>(), c.output(1).data<float>());
}

void binary_crossentropy(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_crossentropy_attrs>();
  const launch::Crossentropy s{a.from_logits, sdk::keras_one_minus(a.label_smoothing),
                               static_cast<float>(0.5 * static_cast<double>(a.label_smoothing))};
  launch::binary_crossentropy(d.stream(), s, c.input(0).data<float>(), c.input(1).data<int32_t>(), c.input(0).dim(0),
                              c.output(0).data<float>(), c.output(1).data<float>());
}

void regression_loss(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_regression_loss_attrs>();
  launch::regression_loss(d.stream(), static_cast<int>(a.loss), a.delta, c.input(0).data<float>(),
                          c.input(1).data<int32_t>(), c.input(0).dim(0), c.input(0).dim(1), c.output(0).data<float>(),
                          c.output(1).data<float>());
}

void binary_accuracy(CudaDevice& d, const sdk::KernelCall& c) {
  launch::binary_accuracy(d.stream(), c.attrs<axon_binary_accuracy_attrs>().threshold, c.input(0).data<float>(),
                          c.input(1).data<int32_t>(), c.input(0).dim(0), c.output(0).data<float>());
}

}  // namespace

void register_loss_kernels(sdk::KernelTable& t) {
  add<OpId::CategoricalCrossentropy, categorical_crossentropy>(t);
  add<OpId::BinaryCrossentropy, binary_crossentropy>(t);
  add<OpId::RegressionLoss, regression_loss>(t);
  add<OpId::BinaryAccuracy, binary_accuracy>(t);
}

}  // namespace axon::cuda
