// The tests use the SDK's tolerances (axon/tolerance.hpp) under their old
// name, axon::test::tol.
#pragma once

#include <axon/tolerance.hpp>

namespace axon::test {
namespace tol = ::axon::tol;
}  // namespace axon::test
