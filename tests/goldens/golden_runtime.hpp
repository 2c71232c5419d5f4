// The runtime the golden model tests share: every device the build tree's
// plugins give, whatever AXON_VISIBLE_DEVICES says.
#pragma once

#include <axon/config.hpp>
#include <axon/runtime.hpp>

namespace axon::golden {

inline Runtime& runtime() {
  if (!Runtime::initialised()) {
    Config c = Config::from_environment();
    c.visible_devices.reset();
    Runtime::init(c);
  }
  return Runtime::get();
}

}  // namespace axon::golden
