// What the API tests share: a runtime of the build tree's plugins (CPU and
// the reference device), started before the API would start its own from
// the environment.
#pragma once

#include "runtime_fixture.hpp"

#include <axon/axon.hpp>

namespace axon::test {

inline Runtime& start_runtime() { return Runtime::init(test_config()); }

}  // namespace axon::test
