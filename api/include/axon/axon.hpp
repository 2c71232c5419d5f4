// axon's public C++ API: TensorFlow's names for the devices (axon::config,
// axon::debugging), eager tensors and ops (axon::device, axon::math,
// axon::nn, axon::random), Keras (axon::keras) and distribution strategies
// (axon::distribute). docs/cpp-api.md sets it beside the TensorFlow guide.
//
//   find_package(axon 0.1 REQUIRED)
//   target_link_libraries(app PRIVATE axon::axon)
#pragma once

#include <axon/api/config.hpp>
#include <axon/api/distribute.hpp>
#include <axon/api/eager.hpp>
#include <axon/api/keras.hpp>
#include <axon/api/random.hpp>
#include <axon/error.hpp>
#include <axon/tensor.hpp>
