// Keras 3's learning-rate schedules: each of axon's against Keras' own rates
// (schedule_goldens.txt, written by tools/tf-goldens/schedule_goldens.py)
// at steps before, on and after its boundaries, read from Keras' serialised
// form; written back and read again to the same rates; bad settings refused
// with one line naming the schedule and the setting.
#include "train_test_util.hpp"

#include <axon/nn/lr_schedule.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace axon;
using namespace axon::nn;
using Catch::Matchers::Contains;

namespace {

struct ScheduleGolden {
  std::string schedule;  // Keras' serialised JSON
  std::vector<std::pair<int64_t, float>> rates;
};

std::vector<ScheduleGolden> schedule_goldens() {
  std::ifstream in(std::string(AXON_TRAIN_TEST_DIR) + "/schedule_goldens.txt");
  REQUIRE(in);
  std::vector<ScheduleGolden> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    ScheduleGolden g;
    s >> g.schedule;
    std::string pair;
    while (s >> pair) {
      const size_t colon = pair.find(':');
      const auto bits = static_cast<uint32_t>(std::stoul(pair.substr(colon + 1), nullptr, 16));
      float rate = 0;
      std::memcpy(&rate, &bits, sizeof rate);
      g.rates.emplace_back(std::stoll(pair.substr(0, colon)), rate);
    }
    out.push_back(std::move(g));
  }
  return out;
}

// Distance in units in the last place of float32.
int64_t ulps(float a, float b) {
  int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::abs(static_cast<int64_t>(ia) - ib);
}

}  // namespace

TEST_CASE("learning-rate schedules: Keras 3's rates within 8 ulp", "[schedules]") {
  const std::vector<ScheduleGolden> cases = schedule_goldens();
  REQUIRE(cases.size() >= 16);
  int64_t worst = 0;
  for (const ScheduleGolden& g : cases) {
    INFO(g.schedule);
    const auto s = schedule_from_keras(g.schedule, "golden");
    const auto again = schedule_from_keras(
        std::string(R"({"class_name": ")") + s->keras_class() + R"(", "config": )" + s->keras_config() + "}", "again");
    for (const auto& [step, want] : g.rates) {
      INFO("step " << step);
      const float got = (*s)(step);
      // TensorFlow flushes denormals to zero (0.01 x 0.5^135 is 0 there).
      if (want == 0 && std::fpclassify(got) == FP_SUBNORMAL) continue;
      CHECK(ulps(got, want) <= 8);
      CHECK((*again)(step) == got);
      worst = std::max(worst, ulps(got, want));
    }
  }
  WARN("largest difference from Keras: " << worst << " ulp");
}

TEST_CASE("learning-rate schedules: bad settings refused with one line", "[schedules]") {
  auto refused = [](const std::string& json) { return test::usage_error([&] { schedule_from_keras(json, "m.keras"); }); };
  CHECK_THAT(refused(R"({"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": 0}})"),
             Contains("m.keras: CosineDecay: decay_steps must be > 0"));
  CHECK_THAT(refused(R"({"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1, "decay_steps": -5, "decay_rate": 0.9}})"),
             Contains("decay_steps must be > 0"));
  CHECK_THAT(refused(R"({"class_name": "PiecewiseConstantDecay", "config": {"boundaries": [10, 20], "values": [1.0, 0.5]}})"),
             Contains("needs one more value than boundaries"));
  CHECK_THAT(refused(R"({"class_name": "PiecewiseConstantDecay", "config": {"boundaries": [20, 10], "values": [1, 0.5, 0.1]}})"),
             Contains("boundaries must rise"));
  CHECK_THAT(refused(R"({"class_name": "CosineDecayRestarts", "config": {"initial_learning_rate": 0.1}})"),
             Contains("CosineDecayRestarts: has no first_decay_steps"));
  CHECK_THAT(refused(R"({"class_name": "PolynomialDecay", "config": {"initial_learning_rate": "fast", "decay_steps": 5}})"),
             Contains("initial_learning_rate is \"fast\", not a number"));
  CHECK_THAT(refused(R"({"class_name": "OneCycle", "config": {}})"),
             Contains("does not support the learning-rate schedule OneCycle; supported: CosineDecay, CosineDecayRestarts"));
  CHECK_THAT(refused("[1, 2"), Contains("m.keras: the learning-rate schedule is not JSON"));
  for (const std::string& msg : {refused(R"({"class_name": "CosineDecay", "config": {"decay_steps": 3}})")})
    CHECK(msg.find('\n') == std::string::npos);
}
