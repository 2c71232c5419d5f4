// Each schedule's arithmetic follows Keras 3's __call__ step by step: the
// settings become float32 tensors, Python numbers meeting them become
// float32 too, and each operation rounds to float32.
#include <axon/error.hpp>
#include <axon/nn/lr_schedule.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>

namespace axon::nn {
namespace {

using json = nlohmann::json;
constexpr auto kPi = static_cast<float>(std::numbers::pi);

float f32(double v) { return static_cast<float>(v); }

void require(bool ok, const char* schedule, const std::string& why) {
  if (!ok) throw UsageError(std::string(schedule) + ": " + why);
}

void check_rate(const char* schedule, const char* key, double v) {
  require(std::isfinite(v) && v >= 0, schedule, std::string(key) + " must be a number >= 0, got " + std::to_string(v));
}

void check_steps(const char* schedule, const char* key, double v) {
  require(std::isfinite(v) && v > 0, schedule, std::string(key) + " must be > 0, got " + std::to_string(v));
}

// ExponentialDecay (lr0 * rate^p) and InverseTimeDecay (lr0 / (1 + rate p)),
// p = step / decay_steps, floored with staircase: one set of settings.
class RateDecay : public LearningRateSchedule {
 public:
  RateDecay(const char* name, double lr0, double decay_steps, double decay_rate, bool staircase, bool inverse)
      : name_(name), lr0_(lr0), steps_(decay_steps), rate_(decay_rate), staircase_(staircase), inverse_(inverse) {
    check_rate(name, "initial_learning_rate", lr0);
    check_steps(name, "decay_steps", decay_steps);
    check_rate(name, "decay_rate", decay_rate);
  }
  float operator()(int64_t step) const override {
    float p = static_cast<float>(step) / f32(steps_);
    if (staircase_) p = std::floor(p);
    if (inverse_) return f32(lr0_) / (1.0f + f32(rate_) * p);
    return f32(lr0_) * std::pow(f32(rate_), p);
  }
  const char* keras_class() const override { return name_; }
  std::string keras_config() const override {
    return json{{"initial_learning_rate", lr0_}, {"decay_steps", steps_}, {"decay_rate", rate_},
                {"staircase", staircase_}, {"name", name_}}
        .dump();
  }

 private:
  const char* name_;
  double lr0_, steps_, rate_;
  bool staircase_, inverse_;
};

class Piecewise : public LearningRateSchedule {
 public:
  explicit Piecewise(const PiecewiseConstantDecay& s) : s_(s) {
    const char* n = "PiecewiseConstantDecay";
    require(!s.boundaries.empty() && s.values.size() == s.boundaries.size() + 1, n,
            "needs one more value than boundaries, got " + std::to_string(s.boundaries.size()) + " boundaries and " +
                std::to_string(s.values.size()) + " values");
    for (size_t i = 0; i < s.boundaries.size(); ++i) {
      require(std::isfinite(s.boundaries[i]), n, "boundaries must be numbers");
      // The step is an integer; Keras casts the boundaries to its type.
      bounds_.push_back(static_cast<int64_t>(s.boundaries[i]));
      require(i == 0 || bounds_[i] > bounds_[i - 1], n, "boundaries must rise");
    }
    for (double v : s.values) check_rate(n, "values", v);
  }
  float operator()(int64_t step) const override {
    const auto i = std::lower_bound(bounds_.begin(), bounds_.end(), step) - bounds_.begin();
    return f32(s_.values[static_cast<size_t>(i)]);  // step <= bounds_[i], > bounds_[i - 1]
  }
  const char* keras_class() const override { return "PiecewiseConstantDecay"; }
  std::string keras_config() const override {
    return json{{"boundaries", s_.boundaries}, {"values", s_.values}, {"name", "PiecewiseConstant"}}.dump();
  }

 private:
  PiecewiseConstantDecay s_;
  std::vector<int64_t> bounds_;
};

class Polynomial : public LearningRateSchedule {
 public:
  explicit Polynomial(const PolynomialDecay& s) : s_(s) {
    check_rate("PolynomialDecay", "initial_learning_rate", s.initial_learning_rate);
    check_steps("PolynomialDecay", "decay_steps", s.decay_steps);
    check_rate("PolynomialDecay", "end_learning_rate", s.end_learning_rate);
    require(std::isfinite(s.power), "PolynomialDecay", "power must be a number");
  }
  float operator()(int64_t step) const override {
    float t = static_cast<float>(step), steps = f32(s_.decay_steps);
    if (s_.cycle)
      steps = steps * (t == 0 ? 1.0f : std::ceil(t / f32(s_.decay_steps)));
    else
      t = std::min(t, steps);
    const float p = t / steps, lr0 = f32(s_.initial_learning_rate), end = f32(s_.end_learning_rate);
    return (lr0 - end) * std::pow(1 - p, f32(s_.power)) + end;
  }
  const char* keras_class() const override { return "PolynomialDecay"; }
  std::string keras_config() const override {
    return json{{"initial_learning_rate", s_.initial_learning_rate}, {"decay_steps", s_.decay_steps},
                {"end_learning_rate", s_.end_learning_rate}, {"power", s_.power}, {"cycle", s_.cycle},
                {"name", "PolynomialDecay"}}
        .dump();
  }

 private:
  PolynomialDecay s_;
};

class Cosine : public LearningRateSchedule {
 public:
  explicit Cosine(const CosineDecay& s) : s_(s) {
    check_rate("CosineDecay", "initial_learning_rate", s.initial_learning_rate);
    check_steps("CosineDecay", "decay_steps", s.decay_steps);
    require(std::isfinite(s.alpha), "CosineDecay", "alpha must be a number");
    if (s.warmup_target) {
      check_rate("CosineDecay", "warmup_target", *s.warmup_target);
      check_rate("CosineDecay", "warmup_steps", s.warmup_steps);
    }
  }
  float operator()(int64_t step) const override {
    const float lr0 = f32(s_.initial_learning_rate), steps = f32(s_.decay_steps);
    float t = static_cast<float>(step);
    if (!s_.warmup_target) return decay(std::min(t, steps), steps, lr0);
    const float target = f32(*s_.warmup_target), warmup = f32(s_.warmup_steps);
    t = std::min(t, steps + warmup);
    if (t < warmup) return (target - lr0) * (t / warmup) + lr0;
    return decay(t - warmup, steps, target);
  }
  const char* keras_class() const override { return "CosineDecay"; }
  std::string keras_config() const override {
    json c{{"initial_learning_rate", s_.initial_learning_rate}, {"decay_steps", s_.decay_steps}, {"alpha", s_.alpha},
           {"name", "CosineDecay"}, {"warmup_target", nullptr}, {"warmup_steps", s_.warmup_steps}};
    if (s_.warmup_target) c["warmup_target"] = *s_.warmup_target;
    return c.dump();
  }

 private:
  float decay(float t, float steps, float from) const {
    const float cosine = 0.5f * (1.0f + std::cos(kPi * (t / steps)));
    return from * (f32(1 - s_.alpha) * cosine + f32(s_.alpha));
  }
  CosineDecay s_;
};

class CosineRestarts : public LearningRateSchedule {
 public:
  explicit CosineRestarts(const CosineDecayRestarts& s) : s_(s) {
    const char* n = "CosineDecayRestarts";
    check_rate(n, "initial_learning_rate", s.initial_learning_rate);
    check_steps(n, "first_decay_steps", s.first_decay_steps);
    check_steps(n, "t_mul", s.t_mul);
    check_rate(n, "m_mul", s.m_mul);
    require(std::isfinite(s.alpha), n, "alpha must be a number");
  }
  float operator()(int64_t step) const override {
    const float alpha = f32(s_.alpha), t_mul = f32(s_.t_mul), m_mul = f32(s_.m_mul);
    float fraction = static_cast<float>(step) / f32(s_.first_decay_steps), restart = 0;
    if (t_mul == 1.0f) {
      restart = std::floor(fraction);
      fraction -= restart;
    } else {
      // Periods grow by t_mul: the restart whose period holds this step.
      restart = std::floor(std::log(1.0f - fraction * (1.0f - t_mul)) / std::log(t_mul));
      const float done = (1.0f - std::pow(t_mul, restart)) / (1.0f - t_mul);
      fraction = (fraction - done) / std::pow(t_mul, restart);
    }
    const float cosine = 0.5f * std::pow(m_mul, restart) * (1.0f + std::cos(kPi * fraction));
    return f32(s_.initial_learning_rate) * ((1 - alpha) * cosine + alpha);
  }
  const char* keras_class() const override { return "CosineDecayRestarts"; }
  std::string keras_config() const override {
    return json{{"initial_learning_rate", s_.initial_learning_rate}, {"first_decay_steps", s_.first_decay_steps},
                {"t_mul", s_.t_mul}, {"m_mul", s_.m_mul}, {"alpha", s_.alpha}, {"name", "SGDRDecay"}}
        .dump();
  }

 private:
  CosineDecayRestarts s_;
};

// Reading a config: each key a number (or bool), missing keys Keras' defaults.
struct ConfigReader {
  const json& config;
  std::string where;
  double number(const char* key, std::optional<double> fallback) const {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) {
      if (!fallback) throw UsageError(where + ": has no " + key);
      return *fallback;
    }
    if (!it->is_number()) throw UsageError(where + ": " + key + " is " + it->dump() + ", not a number");
    return it->get<double>();
  }
  bool boolean(const char* key) const {
    const auto it = config.find(key);
    if (it == config.end() || it->is_null()) return false;
    if (!it->is_boolean()) throw UsageError(where + ": " + key + " is " + it->dump() + ", not true or false");
    return it->get<bool>();
  }
  std::vector<double> numbers(const char* key) const {
    const auto it = config.find(key);
    if (it == config.end() || !it->is_array()) throw UsageError(where + ": " + key + " must be a list of numbers");
    std::vector<double> out;
    for (const json& v : *it) {
      if (!v.is_number()) throw UsageError(where + ": " + key + " holds " + v.dump() + ", not a number");
      out.push_back(v.get<double>());
    }
    return out;
  }
};

using Reader = std::function<std::unique_ptr<LearningRateSchedule>(const ConfigReader&)>;

const std::map<std::string, Reader>& readers() {
  static const std::map<std::string, Reader> r = {
      {"CosineDecay",
       [](const ConfigReader& c) {
         CosineDecay s{c.number("initial_learning_rate", {}), c.number("decay_steps", {}), c.number("alpha", 0.0),
                       std::nullopt, c.number("warmup_steps", 0.0)};
         if (c.config.contains("warmup_target") && !c.config["warmup_target"].is_null())
           s.warmup_target = c.number("warmup_target", {});
         return make_schedule(s);
       }},
      {"CosineDecayRestarts",
       [](const ConfigReader& c) {
         return make_schedule(CosineDecayRestarts{c.number("initial_learning_rate", {}),
                                                  c.number("first_decay_steps", {}), c.number("t_mul", 2.0),
                                                  c.number("m_mul", 1.0), c.number("alpha", 0.0)});
       }},
      {"ExponentialDecay",
       [](const ConfigReader& c) {
         return make_schedule(ExponentialDecay{c.number("initial_learning_rate", {}), c.number("decay_steps", {}),
                                               c.number("decay_rate", {}), c.boolean("staircase")});
       }},
      {"InverseTimeDecay",
       [](const ConfigReader& c) {
         return make_schedule(InverseTimeDecay{c.number("initial_learning_rate", {}), c.number("decay_steps", {}),
                                               c.number("decay_rate", {}), c.boolean("staircase")});
       }},
      {"PiecewiseConstantDecay",
       [](const ConfigReader& c) {
         return make_schedule(PiecewiseConstantDecay{c.numbers("boundaries"), c.numbers("values")});
       }},
      {"PolynomialDecay",
       [](const ConfigReader& c) {
         return make_schedule(PolynomialDecay{c.number("initial_learning_rate", {}), c.number("decay_steps", {}),
                                              c.number("end_learning_rate", 0.0001), c.number("power", 1.0),
                                              c.boolean("cycle")});
       }},
  };
  return r;
}

}  // namespace

std::unique_ptr<LearningRateSchedule> make_schedule(const ExponentialDecay& s) {
  return std::make_unique<RateDecay>("ExponentialDecay", s.initial_learning_rate, s.decay_steps, s.decay_rate,
                                     s.staircase, false);
}
std::unique_ptr<LearningRateSchedule> make_schedule(const PiecewiseConstantDecay& s) {
  return std::make_unique<Piecewise>(s);
}
std::unique_ptr<LearningRateSchedule> make_schedule(const PolynomialDecay& s) { return std::make_unique<Polynomial>(s); }
std::unique_ptr<LearningRateSchedule> make_schedule(const InverseTimeDecay& s) {
  return std::make_unique<RateDecay>("InverseTimeDecay", s.initial_learning_rate, s.decay_steps, s.decay_rate,
                                     s.staircase, true);
}
std::unique_ptr<LearningRateSchedule> make_schedule(const CosineDecay& s) { return std::make_unique<Cosine>(s); }
std::unique_ptr<LearningRateSchedule> make_schedule(const CosineDecayRestarts& s) {
  return std::make_unique<CosineRestarts>(s);
}

std::string supported_schedules() {
  std::string s;
  for (const auto& [name, reader] : readers()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

std::unique_ptr<LearningRateSchedule> schedule_from_keras(const std::string& json_text, const std::string& source) {
  json v;
  try {
    v = json::parse(json_text);
  } catch (const json::exception&) {
    throw UsageError(source + ": the learning-rate schedule is not JSON");
  }
  if (!v.is_object() || !v.contains("class_name") || !v["class_name"].is_string() || !v.contains("config") ||
      !v["config"].is_object())
    throw UsageError(source + ": a learning-rate schedule needs a class_name and a config");
  const std::string cls = v["class_name"].get<std::string>();
  const auto it = readers().find(cls);
  if (it == readers().end())
    throw UsageError(source + ": axon does not support the learning-rate schedule " + cls + "; supported: " +
                     supported_schedules());
  try {
    return it->second(ConfigReader{v["config"], source + ": " + cls});
  } catch (const UsageError& e) {
    const std::string what = e.what();
    // make_schedule's own messages start with the class, not the source.
    throw UsageError(what.starts_with(source) ? what : source + ": " + what);
  }
}

}  // namespace axon::nn
