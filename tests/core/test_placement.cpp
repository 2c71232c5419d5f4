// Placement: explicit scope wins, priority otherwise, soft placement to the
// CPU with one warning, strict placement as an error, the placement log.
// Plugins: placement/ holds FAKE (priority 300, only a Relu kernel); the
// build tree adds CPU (100) and REF (10).
#include "runtime_fixture.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/ops.hpp>
#include <axon/placement_plan.hpp>
#include <axon/profile.hpp>
#include <axon/runtime.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <thread>

using namespace axon;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// [2x3] x [3x2], worked by hand.
const std::vector<float> kA{1, 2, 3, 4, 5, 6};
const std::vector<float> kB{7, 8, 9, 10, 11, 12};
const std::vector<float> kAB{58, 64, 139, 154};

// An OpCall with the tensor arrays it points into.
struct Call {
  std::vector<const Tensor*> in;
  std::vector<Tensor*> out;
  OpCall op;
  Call(OpId id, std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs, const void* attrs = nullptr)
      : in(std::move(inputs)), out(std::move(outputs)) {
    op.op = id;
    op.inputs = in;
    op.outputs = out;
    op.attrs = attrs;
  }
  Call(const Call&) = delete;
};

// FAKE, CPU and REF only, so a GPU on the test machine changes nothing.
Config placement_config() {
  Config c = test::test_config({"placement"});
  c.visible_devices = "fake:0,cpu:0,ref:0";
  return c;
}

axon_matmul_attrs no_transpose() {
  axon_matmul_attrs m{};
  m.struct_size = sizeof m;
  return m;
}

}  // namespace

TEST_CASE("without a scope the highest-priority device with a kernel runs the op", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  Device* cpu = rt.cpu_device();
  REQUIRE(cpu != nullptr);
  CHECK(&rt.default_device() == &fake);  // 300 > 100
  CHECK(rt.devices().front() == &fake);

  Tensor a = Tensor::from_vector<float>(*cpu, AXON_FLOAT32, {2, 3}, kA);
  Tensor b = Tensor::from_vector<float>(*cpu, AXON_FLOAT32, {3, 2}, kB);
  Tensor c(*cpu, AXON_FLOAT32, {2, 2});
  auto attrs = no_transpose();
  Call mm(OpId::MatMul, {&a, &b}, {&c}, &attrs);
  CHECK(&place(mm.op) == cpu);  // FAKE has no MatMul: next by priority

  Call relu(OpId::Relu, {&a}, {&c});
  CHECK(&place(relu.op) == &fake);

  run(mm.op);
  CHECK(c.to_vector<float>() == kAB);
}

TEST_CASE("an explicit device scope wins over priority and nests", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("/device:FAKE:0");
  Device& cpu = rt.device("cpu:0");
  Tensor x(cpu, AXON_FLOAT32, {3});
  Tensor y(cpu, AXON_FLOAT32, {3});
  Call relu(OpId::Relu, {&x}, {&y});
  CHECK(DeviceScope::current() == nullptr);
  {
    DeviceScope outer("cpu:0");
    CHECK(&place(relu.op) == &cpu);
    {
      DeviceScope inner(fake);
      CHECK(&place(relu.op) == &fake);
    }
    CHECK(&place(relu.op) == &cpu);
  }
  CHECK(DeviceScope::current() == nullptr);
  CHECK_THROWS_AS(DeviceScope("gpu:99"), UsageError);
}

TEST_CASE("soft placement runs an op without a kernel on the CPU, warning once", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  Tensor a = Tensor::from_vector<float>(fake, AXON_FLOAT32, {2, 3}, kA);
  Tensor b = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3, 2}, kB);
  Tensor c(fake, AXON_FLOAT32, {2, 2});
  test::StderrCapture capture;
  {
    DeviceScope scope(fake);
    ops::matmul(a, b, c, false, false);
    ops::matmul(a, b, c, false, false);
  }
  // Inputs were copied to the CPU, the result copied back to c on FAKE.
  CHECK(&c.device() == &fake);
  CHECK(c.to_vector<float>() == kAB);
  const std::string warning =
      "axon: W placement: op MatMul has no kernel on /device:FAKE:0 (float32); running it on /device:CPU:0 "
      "instead. Use --strict-placement to make this an error.";
  CHECK(capture.count_lines(warning) == 1);
}

TEST_CASE("a call the device declines runs on the CPU, up front or at launch, warning once", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  auto ramp = [](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 5) - 2.0f;
    return v;
  };
  auto relu_of = [](std::vector<float> v) {
    for (float& f : v) f = std::max(f, 0.0f);
    return v;
  };
  test::StderrCapture capture;
  DeviceScope scope(fake);
  for (int64_t n : {2000, 7, 6}) {  // declined by supports(), by the kernel, run on FAKE
    INFO(n << " elements");
    Tensor x = Tensor::from_vector<float>(fake, AXON_FLOAT32, {n}, ramp(n));
    Tensor y(fake, AXON_FLOAT32, {n});
    for (int i = 0; i < 2; ++i) ops::relu(x, y);
    CHECK(&y.device() == &fake);
    CHECK(y.to_vector<float>() == relu_of(ramp(n)));
  }
  // One warning per op and device: the first decline's, naming the shapes.
  const std::string text = capture.text();
  CHECK(capture.count_lines("axon: W placement: op Relu: /device:FAKE:0 declines this call (it does not run Relu on "
                            "x [2000]); running it on /device:CPU:0 instead. Use --strict-placement to make this an "
                            "error.") == 1);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

TEST_CASE("a call the kernel declines when it runs goes to the CPU with the plugin's message", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  Tensor x = Tensor::from_vector<float>(fake, AXON_FLOAT32, {7}, std::vector<float>{-1, 2, -3, 4, -5, 6, -7});
  Tensor y = Tensor::from_vector<float>(fake, AXON_FLOAT32, {7}, std::vector<float>(7, 9.0f));
  test::StderrCapture capture;
  {
    DeviceScope scope(fake);
    ops::relu(x, y);
  }
  CHECK(y.to_vector<float>() == std::vector<float>{0, 2, 0, 4, 0, 6, 0});
  CHECK(capture.count_lines("axon: W placement: op Relu: /device:FAKE:0 declines this call (Relu on /device:FAKE:0: "
                            "Relu: no algorithm for 7 elements (AXON_UNIMPLEMENTED)); running it on /device:CPU:0 "
                            "instead. Use --strict-placement to make this an error.") == 1);
}

TEST_CASE("strict placement makes a declined call an error", "[placement]") {
  Config c = placement_config();
  c.strict_placement = true;
  Runtime& rt = Runtime::init(c);
  Device& fake = rt.device("fake:0");
  DeviceScope scope(fake);
  for (int64_t n : {2000, 7}) {
    Tensor x = Tensor::from_vector<float>(fake, AXON_FLOAT32, {n}, std::vector<float>(static_cast<size_t>(n), 1.0f));
    Tensor y(fake, AXON_FLOAT32, {n});
    CHECK_THROWS_WITH(ops::relu(x, y), StartsWith("op Relu: /device:FAKE:0 declines this call (") &&
                                           Contains("; devices with this kernel: "));
  }
}

TEST_CASE("soft placement copies in-place updated inputs back (ApplyAdam)", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  std::vector<float> zeros(3, 0.0f), ones(3, 1.0f), var0{1.0f, 2.0f, 3.0f};
  Tensor var = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3}, var0);
  Tensor m = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3}, zeros);
  Tensor v = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3}, zeros);
  Tensor g = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3}, ones);
  axon_adam_attrs at{};
  at.struct_size = sizeof at;
  at.learning_rate = 0.001f;
  at.beta_1 = 0.9f;
  at.beta_2 = 0.999f;
  at.epsilon = 1e-7f;
  at.step = 1;
  test::StderrCapture capture;
  {
    DeviceScope scope(fake);
    ops::apply_adam(var, m, v, g, at);
  }
  capture.text();
  // Keras Adam, first step, g = 1: m = 0.1, v = 0.001,
  // var -= lr * sqrt(1 - b2) / (1 - b1) * m / (sqrt(v) + eps) ~= var - lr.
  const double lr_t = 0.001 * std::sqrt(1 - 0.999) / (1 - 0.9);
  const double step = lr_t * 0.1 / (std::sqrt(0.001) + 1e-7);
  auto got = var.to_vector<float>();
  for (int i = 0; i < 3; ++i) CHECK(got[i] == Approx(var0[i] - step).epsilon(1e-6));
  for (float x : m.to_vector<float>()) CHECK(x == Approx(0.1f).epsilon(1e-6));
  for (float x : v.to_vector<float>()) CHECK(x == Approx(0.001f).epsilon(1e-4));  // 1 - 0.999f is not exact in float
}

TEST_CASE("strict placement makes a missing kernel an error naming op, device and alternatives", "[placement]") {
  Config c = placement_config();
  c.strict_placement = true;
  Runtime& rt = Runtime::init(c);
  Device& fake = rt.device("fake:0");
  Tensor a = Tensor::from_vector<float>(fake, AXON_FLOAT32, {2, 3}, kA);
  Tensor b = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3, 2}, kB);
  Tensor out(fake, AXON_FLOAT32, {2, 2});
  DeviceScope scope(fake);
  try {
    ops::matmul(a, b, out, false, false);
    FAIL("strict placement let MatMul run");
  } catch (const RuntimeError& e) {
    std::string msg = e.what();
    CHECK_THAT(msg, StartsWith("op MatMul has no float32 kernel on /device:FAKE:0; devices with this kernel: "));
    CHECK_THAT(msg, Contains("/device:CPU:0"));
    CHECK(msg.find("FAKE:0", msg.find("kernel: ")) == std::string::npos);
  }
  // An op it does have still runs there.
  Tensor y(fake, AXON_FLOAT32, {2, 3});
  ops::relu(a, y);
  CHECK(y.to_vector<float>() == kA);
}

TEST_CASE("the placement log prints once per op, layer and device", "[placement]") {
  Config c = placement_config();
  c.log_device_placement = true;
  Runtime& rt = Runtime::init(c);
  Device& cpu = rt.device("cpu:0");
  Tensor a = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {2, 3}, kA);
  Tensor b = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {3, 2}, kB);
  Tensor out(cpu, AXON_FLOAT32, {2, 2});
  Tensor y(cpu, AXON_FLOAT32, {2, 3});
  test::StderrCapture capture;
  for (int step = 0; step < 3; ++step) {
    ops::relu(a, y, "dense_1");  // FAKE by priority
    ops::relu(a, y, "dense_2");
    ops::matmul(a, b, out, false, false, "dense_1");  // CPU
    DeviceScope scope(cpu);
    ops::relu(a, y, "dense_1");
  }
  std::istringstream in(capture.text());
  int relu_fake = 0, relu_cpu = 0, matmul_cpu = 0, lines = 0;
  for (std::string l; std::getline(in, l); ++lines) {
    relu_fake += l == "Executing op Relu (dense_1) in device /device:FAKE:0" ||
                 l == "Executing op Relu (dense_2) in device /device:FAKE:0";
    relu_cpu += l == "Executing op Relu (dense_1) in device /device:CPU:0";
    matmul_cpu += l == "Executing op MatMul (dense_1) in device /device:CPU:0";
  }
  CHECK(relu_fake == 2);  // layers dense_1 and dense_2
  CHECK(relu_cpu == 1);
  CHECK(matmul_cpu == 1);
  CHECK(lines == 4);
}

TEST_CASE("an op no device has is an error, and the profiler counts calls per op and device", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  Tensor x(fake, AXON_FLOAT32, {4});
  Tensor y(fake, AXON_FLOAT32, {4});
  Tensor xi(fake, AXON_INT32, {4});
  Tensor yi(fake, AXON_INT32, {4});
  Call no_kernel(OpId::Relu, {&xi}, {&yi});  // no device has an int32 Relu
  CHECK_THROWS_WITH(run(no_kernel.op), Contains("op Relu has no int32 kernel on any device"));

  CHECK_FALSE(op_profiling());
  ops::relu(x, y);
  CHECK(op_times().empty());  // off: nothing recorded
  set_op_profiling(true);
  for (int i = 0; i < 5; ++i) ops::relu(x, y);
  set_op_profiling(false);
  auto times = op_times();
  REQUIRE(times.size() == 1);
  CHECK(times[0].op == "Relu");
  CHECK(times[0].device == "/device:FAKE:0");
  CHECK(times[0].calls == 5);
  CHECK(times[0].seconds > 0);  // five kernel calls take time
  reset_op_times();
  CHECK(op_times().empty());
}

TEST_CASE("threads keep their own device scopes and share the placement log", "[placement][threads]") {
  Config c = test::test_config();
  c.cpu_devices = 2;
  c.log_device_placement = true;
  Runtime& rt = Runtime::init(c);
  REQUIRE(rt.count("CPU") == 2);
  test::StderrCapture capture;
  std::vector<int> wrong(2, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      Device& mine = rt.device("cpu:" + std::to_string(r));
      DeviceScope scope(mine);  // per thread: the other thread's scope is not seen
      // Both threads also open (lazily) the shared device at once.
      Tensor shared(rt.device("ref:0"), AXON_FLOAT32, {4});
      Tensor a = Tensor::from_vector<float>(mine, AXON_FLOAT32, {2, 3}, kA);
      Tensor b = Tensor::from_vector<float>(mine, AXON_FLOAT32, {3, 2}, kB);
      Tensor out(mine, AXON_FLOAT32, {2, 2});
      for (int i = 0; i < 200; ++i) {
        Call probe(OpId::MatMul, {&a, &b}, {&out});
        if (&place(probe.op) != &mine) ++wrong[r];
        ops::matmul(a, b, out, false, false, "dense");
        if (out.to_vector<float>() != kAB) ++wrong[r];
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong[0] == 0);
  CHECK(wrong[1] == 0);
  CHECK(capture.count_lines("Executing op MatMul (dense) in device /device:CPU:0") == 1);
  CHECK(capture.count_lines("Executing op MatMul (dense) in device /device:CPU:1") == 1);
}

TEST_CASE("a malformed call is refused on the host, naming op, tensor and layer", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& cpu = rt.device("cpu:0");
  Tensor x(cpu, AXON_FLOAT32, {3});
  Tensor y(cpu, AXON_FLOAT32, {4});
  DeviceScope scope(cpu);
  CHECK_THROWS_WITH(ops::relu(x, y, "dense_1"), "Relu: y has shape [4], expected x's [3] (layer dense_1)");
}

TEST_CASE("check-numerics stops at the first op that writes NaN or Inf, naming op, layer and device", "[placement]") {
  Config c = placement_config();
  c.check_numerics = true;
  Runtime& rt = Runtime::init(c);
  Device& cpu = rt.device("cpu:0");
  DeviceScope scope(cpu);
  Tensor y(cpu, AXON_FLOAT32, {5});
  ops::fill(y, 1.5f, "dense_1");  // finite: runs
  CHECK(y.to_vector<float>() == std::vector<float>(5, 1.5f));
  CHECK_THROWS_WITH(ops::fill(y, std::nanf(""), "dense_1"),
                    "check-numerics: op Fill (layer dense_1) on /device:CPU:0 produced nan in output 0 (y) at element 0");
  std::vector<float> v{1, 2, 3, 1e38f, 5};
  Tensor x = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {5}, v);
  CHECK_THROWS_WITH(ops::scale(x, y, 10.0f, "loss"),
                    "check-numerics: op Scale (layer loss) on /device:CPU:0 produced inf in output 0 (y) at element 3");
}

namespace {
// FAKE has only Relu: MatMul falls back (soft) or has nowhere to run (strict).
void record_dense_step(bool strict) {
  Config c = placement_config();
  c.strict_placement = strict;
  Runtime& rt = Runtime::init(c);
  Device& fake = rt.device("fake:0");
  Tensor a = Tensor::from_vector<float>(fake, AXON_FLOAT32, {2, 3}, kA);
  Tensor b = Tensor::from_vector<float>(fake, AXON_FLOAT32, {3, 2}, kB);
  Tensor bias = Tensor::from_vector<float>(fake, AXON_FLOAT32, {2}, std::vector<float>{1, 1});
  Tensor out = Tensor::from_vector<float>(fake, AXON_FLOAT32, {2, 2}, std::vector<float>{0, 0, 0, 0});
  Tensor y(fake, AXON_FLOAT32, {2, 3});
  DeviceScope scope(fake);
  PlacementRecorder rec;
  ops::relu(a, y, "dense_1");
  ops::matmul(a, b, out, false, false, "dense_1");
  ops::matmul(a, b, out, false, false, "dense_2");
  ops::fused_matmul(a, b, bias, out, false, false, true, "dense_2");
  CHECK(out.to_vector<float>() == std::vector<float>(4, 0.0f));  // nothing ran
  const auto& ops = rec.ops();
  REQUIRE(ops.size() == (strict ? 5u : 4u));
  CHECK((ops[0].op == "Relu" && ops[0].device == "/device:FAKE:0" && !ops[0].fallback && ops[0].layer == "dense_1"));
  CHECK((ops[1].op == "MatMul" && ops[1].requested == "/device:FAKE:0" && ops[1].fallback));
  CHECK((ops[2].op == "MatMul" && ops[2].layer == "dense_2"));
  CHECK(ops[1].device == (strict ? "" : "/device:CPU:0"));
  if (strict) {
    // Strict placement borrows no fused op from the CPU: its parts stay on
    // FAKE (the MatMul of dense_2 is recorded once), where only Relu runs.
    CHECK((ops[3].op == "BiasAdd" && ops[3].layer == "dense_2" && ops[3].device.empty()));
    CHECK((ops[4].op == "Relu" && ops[4].layer == "dense_2" && ops[4].device == "/device:FAKE:0"));
  } else {
    CHECK(ops[3].op == "_FusedMatMul");
    CHECK(ops[3].device == "/device:CPU:0");
    // FAKE has Relu, which goes along inside the fused op; it lacks the other two.
    CHECK(ops[3].moved_with == "Relu");
    CHECK(ops[3].parts_missing == std::vector<std::string>{"MatMul", "BiasAdd"});
  }
  // Each missing (op, dtype) once; the optional fused op is not one of them.
  std::vector<std::string> names;
  for (const auto& m : rec.missing()) names.push_back(m.op + " " + dtype_name(m.dtype));
  CHECK(names == std::vector<std::string>{"MatMul float32", "BiasAdd float32"});
}
}  // namespace

TEST_CASE("a placement recorder places without running and lists every missing kernel", "[placement]") {
  record_dense_step(false);
}

TEST_CASE("under strict placement a recorder lists every missing kernel instead of stopping at the first",
          "[placement]") {
  record_dense_step(true);
}

TEST_CASE("a fused op called without its optional output does not need the part behind it", "[placement]") {
  Runtime& rt = Runtime::init(placement_config());
  Device& fake = rt.device("fake:0");
  Device& cpu = rt.device("cpu:0");
  Tensor x(cpu, AXON_FLOAT32, {1, 4, 4, 1}), filter(cpu, AXON_FLOAT32, {3, 3, 1, 1});
  Tensor dy(cpu, AXON_FLOAT32, {1, 1, 1, 1}), argmax(cpu, AXON_UINT8, {1, 1, 1, 1});
  Tensor dfilter(cpu, AXON_FLOAT32, {3, 3, 1, 1}), dbias(cpu, AXON_FLOAT32, {1}), dx(cpu, AXON_FLOAT32, {1, 4, 4, 1});
  Call with_dx(OpId::FusedConv2DMaxPoolGrad, {&x, &filter, &dy, &argmax}, {&dfilter, &dbias, &dx});
  Call without_dx(OpId::FusedConv2DMaxPoolGrad, {&x, &filter, &dy, &argmax}, {&dfilter, &dbias});
  with_dx.op.layer = "conv2d_1";
  without_dx.op.layer = "conv2d";
  const std::vector<std::string> all{"MaxPoolGrad", "ReluGrad", "BiasAddGrad", "Conv2DBackpropFilter",
                                     "Conv2DBackpropInput"};
  const std::vector<std::string> no_input_grad(all.begin(), all.end() - 1);
  DeviceScope scope(fake);
  {  // run on FAKE, which lacks it: it falls back, naming only the parts it uses
    PlacementRecorder rec;
    run(with_dx.op);
    run(without_dx.op);
    REQUIRE(rec.ops().size() == 2);
    CHECK(rec.ops()[0].parts_missing == all);
    CHECK(rec.ops()[1].parts_missing == no_input_grad);
  }
  {  // noted as the layer's fused path first, then run under the CPU's scope: the note learns it too
    PlacementRecorder rec;
    for (Call* c : {&with_dx, &without_dx}) {
      note_fused_path(OpId::FusedConv2DMaxPoolGrad, cpu, c->op.layer, AXON_FLOAT32);
      DeviceScope on_cpu(cpu);
      run(c->op);
    }
    REQUIRE(rec.ops().size() == 2);
    CHECK((rec.ops()[0].fallback && rec.ops()[0].parts_missing == all));
    CHECK((rec.ops()[1].fallback && rec.ops()[1].parts_missing == no_input_grad));
    std::vector<std::string> layers_missing_input_grad;
    for (const PlannedOp& o : rec.ops())
      for (const std::string& part : o.parts_missing)
        if (part == "Conv2DBackpropInput") layers_missing_input_grad.push_back(o.layer);
    CHECK(layers_missing_input_grad == std::vector<std::string>{"conv2d_1"});
  }
}
