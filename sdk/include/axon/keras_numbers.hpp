// The float32 constants Keras derives from the Python numbers a user gives,
// for plugins that match Keras' (TensorFlow's) bits.
#pragma once

#include <charconv>
#include <cstdlib>

namespace axon::sdk {

// 1 - x as Keras computes it: in double from the Python number (1 - rho of
// RMSprop, 1 - beta of Adam, 1 - label_smoothing), then rounded to float32.
// A float attribute holds that number rounded to float32, whose shortest
// decimal form is the number the user wrote ("0.9"), so it is parsed back.
inline float keras_one_minus(float x) {
  char text[32];
  const auto r = std::to_chars(text, text + sizeof text - 1, x);
  *r.ptr = '\0';
  return static_cast<float>(1.0 - std::strtod(text, nullptr));
}

}  // namespace axon::sdk
