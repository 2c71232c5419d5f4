// Keras 3's learning-rate schedules (keras.optimizers.schedules): the rate
// an optimizer uses for its update number `step` (0-based: the updates made
// before this one, as Keras passes optimizer.iterations), computed in
// float32 in Keras' order. At the goldens' steps the rates equal Keras' bit
// for bit (the test allows 8 ulp: TensorFlow's pow and cos need not round as
// the C library's do), except that TensorFlow flushes a denormal rate to 0.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  virtual float operator()(int64_t step) const = 0;
  // Keras' class name ("CosineDecay") and its config as Keras writes it
  // (JSON text), for compile configs written back.
  virtual const char* keras_class() const = 0;
  virtual std::string keras_config() const = 0;
};

struct ExponentialDecay {
  double initial_learning_rate = 0, decay_steps = 0, decay_rate = 0;
  bool staircase = false;
};
struct PiecewiseConstantDecay {
  std::vector<double> boundaries, values;  // values: one more than boundaries
};
struct PolynomialDecay {
  double initial_learning_rate = 0, decay_steps = 0, end_learning_rate = 0.0001, power = 1.0;
  bool cycle = false;
};
struct InverseTimeDecay {
  double initial_learning_rate = 0, decay_steps = 0, decay_rate = 0;
  bool staircase = false;
};
struct CosineDecay {
  double initial_learning_rate = 0, decay_steps = 0, alpha = 0;
  // Keras 3's linear warmup from initial_learning_rate to warmup_target
  // over warmup_steps, then the decay from warmup_target.
  std::optional<double> warmup_target;
  double warmup_steps = 0;
};
struct CosineDecayRestarts {
  double initial_learning_rate = 0, first_decay_steps = 0, t_mul = 2.0, m_mul = 1.0, alpha = 0;
};

// Each checks its settings as Keras does (decay steps > 0, one more value
// than boundaries, ...) and more (rates finite and not negative, boundaries
// rising): UsageError naming the schedule and the setting.
std::unique_ptr<LearningRateSchedule> make_schedule(const ExponentialDecay& s);
std::unique_ptr<LearningRateSchedule> make_schedule(const PiecewiseConstantDecay& s);
std::unique_ptr<LearningRateSchedule> make_schedule(const PolynomialDecay& s);
std::unique_ptr<LearningRateSchedule> make_schedule(const InverseTimeDecay& s);
std::unique_ptr<LearningRateSchedule> make_schedule(const CosineDecay& s);
std::unique_ptr<LearningRateSchedule> make_schedule(const CosineDecayRestarts& s);

// A schedule from Keras' serialised form: {"class_name": "CosineDecay",
// "config": {...}} (the module and registered_name keys are ignored), as a
// compile config or a learning_rate in an optimizer's config holds it.
// UsageError naming `source`, the class and the key otherwise.
std::unique_ptr<LearningRateSchedule> schedule_from_keras(const std::string& json_text, const std::string& source);

// "ExponentialDecay, PiecewiseConstantDecay, ...", for messages.
std::string supported_schedules();

}  // namespace axon::nn
