// Tensors: host round trips, reshape, copies within and across devices.
#include "runtime_fixture.hpp"

#include <axon/runtime.hpp>
#include <axon/tensor.hpp>

#include <catch2/catch.hpp>

#include <cstdint>

using namespace axon;

TEST_CASE("tensors round-trip, reshape, clone and move across devices", "[tensor]") {
  Runtime& rt = Runtime::init(test::test_config({"placement"}));
  Device& cpu = rt.device("cpu:0");
  Device& fake = rt.device("fake:0");

  std::vector<float> v{1, 2, 3, 4, 5, 6};
  Tensor t = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {2, 3}, v);
  CHECK(t.defined());
  CHECK(t.numel() == 6);
  CHECK(t.bytes() == 24);
  CHECK(t.rank() == 2);
  CHECK(t.dim(-1) == 3);
  CHECK(shape_string(t.shape()) == "[2,3]");
  CHECK(t.to_vector<float>() == v);

  Tensor flat = t.reshaped({6});
  CHECK(flat.data() == t.data());  // same buffer
  CHECK_THROWS_AS(t.reshaped({4}), UsageError);

  Tensor copy = t.clone();
  CHECK(copy.data() != t.data());
  std::vector<float> w{9, 9, 9, 9, 9, 9};
  copy.copy_from_host(w.data(), w.size() * sizeof(float));
  CHECK(t.to_vector<float>() == v);  // the original is untouched

  Tensor there = t.to(fake);
  CHECK(&there.device() == &fake);
  CHECK(there.to_vector<float>() == v);
  CHECK(there.to(cpu).to_vector<float>() == v);

  std::vector<int32_t> labels{3, 1, 4};
  Tensor l = Tensor::from_vector<int32_t>(fake, AXON_INT32, {3}, labels);
  CHECK(l.to_vector<int32_t>() == labels);
  axon_tensor view = l.c_view();
  CHECK(view.rank == 1);
  CHECK(view.dims[0] == 3);
  CHECK(view.dtype == AXON_INT32);

  std::vector<float> small(2);
  CHECK_THROWS_AS(t.copy_to_host(small.data(), small.size() * sizeof(float)), UsageError);
  CHECK_THROWS_AS(Tensor(cpu, AXON_FLOAT32, {2, -1}), UsageError);

  Tensor empty(cpu, AXON_FLOAT32, {0, 4});
  CHECK(empty.numel() == 0);
  CHECK(empty.to_vector<float>().empty());
  CHECK_FALSE(Tensor().defined());
  CHECK(dtype_size(AXON_UINT8) == 1);
  CHECK(std::string(dtype_name(AXON_INT64)) == "int64");
}

TEST_CASE("views share part of a buffer: reads, writes, kernels and bounds", "[tensor]") {
  Runtime& rt = Runtime::init(test::test_config({"placement"}));
  Device& cpu = rt.device("cpu:0");
  Device& fake = rt.device("fake:0");
  std::vector<float> v{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  Tensor flat = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {10}, v);

  Tensor mid = flat.view(4, {2, 2});
  CHECK(mid.shape() == Shape{2, 2});
  CHECK(mid.bytes() == 16);
  CHECK(static_cast<char*>(mid.data()) == static_cast<char*>(flat.data()) + 16);
  CHECK(mid.to_vector<float>() == std::vector<float>{4, 5, 6, 7});
  CHECK(mid.c_view().data == mid.data());

  // Writing through a view changes only its elements.
  std::vector<float> w{-1, -2, -3, -4};
  mid.copy_from_host(w.data(), 16);
  CHECK(flat.to_vector<float>() == std::vector<float>{0, 1, 2, 3, -1, -2, -3, -4, 8, 9});

  // A view of a view, and reshaping a view, keep the offset.
  Tensor inner = mid.view(1, {2});
  CHECK(inner.to_vector<float>() == std::vector<float>{-2, -3});
  CHECK(mid.reshaped({4}).to_vector<float>() == std::vector<float>{-1, -2, -3, -4});

  // Copies to another device and back, and a clone, hold just the view's elements.
  CHECK(inner.to(fake).to_vector<float>() == std::vector<float>{-2, -3});
  CHECK(inner.clone().numel() == 2);

  // The buffer lives as long as any view of it.
  Tensor tail = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {10}, v).view(9, {1});
  CHECK(tail.to_vector<float>() == std::vector<float>{9});

  CHECK(flat.view(10, {0}).numel() == 0);
  CHECK_THROWS_AS(flat.view(8, {3}), UsageError);
  CHECK_THROWS_AS(flat.view(-1, {1}), UsageError);
  CHECK_THROWS_AS(flat.view(11, {0}), UsageError);
  CHECK_THROWS_AS(mid.view(2, {3}), UsageError);  // inside the buffer, outside the view
}
