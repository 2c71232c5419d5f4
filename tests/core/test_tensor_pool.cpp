// TensorPool: memory goes back to the pool and the next take of its size gets
// it; scratch_like takes from the innermost PoolScope's pool on its device.
#include "runtime_fixture.hpp"

#include <axon/runtime.hpp>
#include <axon/tensor_pool.hpp>

#include <catch2/catch.hpp>

using namespace axon;

TEST_CASE("a tensor pool reuses a block of the same size and scratch_like takes from the scope's pool", "[tensor]") {
  Runtime& rt = Runtime::init(test::test_config({"placement"}));
  Device& cpu = rt.device("cpu:0");
  Device& fake = rt.device("fake:0");
  TensorPool pool(cpu);
  constexpr int64_t kBytes = 4 * 8 * 4;

  const void* block = nullptr;
  {
    Tensor a = pool.take(AXON_FLOAT32, {4, 8});
    block = a.data();
    CHECK(pool.held_bytes() == kBytes);
  }
  CHECK(pool.held_bytes() == kBytes);  // cached, not freed
  Tensor b = pool.take(AXON_FLOAT32, {8, 4});
  CHECK(b.data() == block);
  CHECK(pool.peak_bytes() == kBytes);
  b = Tensor();

  const Tensor like(cpu, AXON_FLOAT32, {4, 8});
  const Tensor outside = scratch_like(like);  // no scope: a tensor of its own
  CHECK(outside.data() != block);
  CHECK(outside.shape() == like.shape());
  CHECK(pool.held_bytes() == kBytes);
  {
    PoolScope scope(pool);
    Tensor s = scratch_like(like);
    CHECK(s.data() == block);
    CHECK(&s.device() == &cpu);
    CHECK(s.dtype() == AXON_FLOAT32);
    CHECK(s.shape() == like.shape());
    // On another device than the pool's: allocated there, the pool untouched.
    const Tensor there = scratch_like(Tensor(fake, AXON_FLOAT32, {4, 8}));
    CHECK(&there.device() == &fake);
    CHECK(pool.held_bytes() == kBytes);
    s = Tensor();
    TensorPool inner_pool(cpu);
    {
      PoolScope inner(inner_pool);
      const Tensor t = scratch_like(like);
      CHECK(inner_pool.held_bytes() == kBytes);
      CHECK(t.data() != block);
    }
    CHECK(scratch_like(like).data() == block);  // the outer scope's pool again
  }
  const Tensor after = scratch_like(like);
  CHECK(after.data() != block);
  CHECK(pool.held_bytes() == kBytes);
}
