// axon::keras::optimizers and their learning-rate schedules: the core's
// optimizer options with Keras' defaults, and the core's schedules, which
// fit applies before every update (nn::FitOptions::learning_rate_schedule).
#include <axon/api/keras.hpp>
#include <axon/error.hpp>

namespace axon::keras::optimizers {

namespace schedules {

LearningRateSchedule::LearningRateSchedule(std::shared_ptr<const nn::LearningRateSchedule> schedule)
    : schedule_(std::move(schedule)) {
  if (!schedule_) throw UsageError("LearningRateSchedule: no schedule");
}

double LearningRateSchedule::operator()(int64_t step) const { return (*schedule_)(step); }

LearningRateSchedule ExponentialDecay(const nn::ExponentialDecay& s) {
  return LearningRateSchedule(nn::make_schedule(s));
}
LearningRateSchedule PiecewiseConstantDecay(const nn::PiecewiseConstantDecay& s) {
  return LearningRateSchedule(nn::make_schedule(s));
}
LearningRateSchedule PolynomialDecay(const nn::PolynomialDecay& s) {
  return LearningRateSchedule(nn::make_schedule(s));
}
LearningRateSchedule InverseTimeDecay(const nn::InverseTimeDecay& s) {
  return LearningRateSchedule(nn::make_schedule(s));
}
LearningRateSchedule CosineDecay(const nn::CosineDecay& s) { return LearningRateSchedule(nn::make_schedule(s)); }
LearningRateSchedule CosineDecayRestarts(const nn::CosineDecayRestarts& s) {
  return LearningRateSchedule(nn::make_schedule(s));
}

}  // namespace schedules

Optimizer::Optimizer(const nn::OptimizerOptions& o, const LearningRate& learning_rate)
    : options(o), schedule(learning_rate.schedule) {
  // The optimizer starts at the schedule's first rate, as Keras' does.
  options.learning_rate = static_cast<float>(learning_rate.value);
}

namespace {
Optimizer of(nn::OptimizerKind kind, const LearningRate& learning_rate) {
  nn::OptimizerOptions o;
  o.kind = kind;
  return Optimizer(o, learning_rate);
}
}  // namespace

Optimizer Adam(const LearningRate& learning_rate) { return of(nn::OptimizerKind::adam, learning_rate); }
Optimizer SGD(const LearningRate& learning_rate, double momentum, bool nesterov) {
  Optimizer o = of(nn::OptimizerKind::sgd, learning_rate);
  o.options.momentum = static_cast<float>(momentum);
  o.options.nesterov = nesterov;
  return o;
}
Optimizer RMSprop(const LearningRate& learning_rate) { return of(nn::OptimizerKind::rmsprop, learning_rate); }
Optimizer AdamW(const LearningRate& learning_rate, double weight_decay) {
  Optimizer o = of(nn::OptimizerKind::adamw, learning_rate);
  o.options.weight_decay = static_cast<float>(weight_decay);
  return o;
}
Optimizer Adagrad(const LearningRate& learning_rate) { return of(nn::OptimizerKind::adagrad, learning_rate); }
Optimizer Nadam(const LearningRate& learning_rate) { return of(nn::OptimizerKind::nadam, learning_rate); }

}  // namespace axon::keras::optimizers
