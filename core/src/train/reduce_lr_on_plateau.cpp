// Step for step Keras 3's ReduceLROnPlateau.on_epoch_end, the rate read as
// the float32 it is and reduced in double, as Keras' Python does.
#include <axon/error.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace axon::train {

ReduceLROnPlateau::ReduceLROnPlateau(const ReduceLROnPlateauOptions& options)
    : options_(options), monitor_(options.monitor, options.mode, options.min_delta) {
  if (!(options.factor < 1.0) || !(options.factor >= 0))
    throw UsageError("ReduceLROnPlateau: factor must be from 0 to below 1, got " + std::to_string(options.factor));
  if (options.patience < 0 || options.cooldown < 0)
    throw UsageError("ReduceLROnPlateau: patience and cooldown must be >= 0");
  if (!(options.min_lr >= 0)) throw UsageError("ReduceLROnPlateau: min_lr must be >= 0");
}

std::optional<float> ReduceLROnPlateau::on_epoch_end(int, const EpochValues& logs, float learning_rate) {
  const double current = monitor_.value(logs);
  const bool in_cooldown = cooldown_counter_ > 0;
  if (in_cooldown) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (monitor_.improves(current, best_)) {
    best_ = current;
    wait_ = 0;
    return std::nullopt;
  }
  if (cooldown_counter_ > 0) return std::nullopt;
  if (++wait_ < options_.patience) return std::nullopt;
  const double old = learning_rate;
  if (!(old > static_cast<double>(static_cast<float>(options_.min_lr)))) return std::nullopt;
  cooldown_counter_ = options_.cooldown;
  wait_ = 0;
  return static_cast<float>(std::max(old * options_.factor, options_.min_lr));
}

std::string ReduceLROnPlateau::message(int epoch, float learning_rate) {
  // Python's repr of the float32 as a double: the shortest digits that read back.
  std::array<char, 32> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), static_cast<double>(learning_rate)).ptr;
  return "Epoch " + std::to_string(epoch + 1) + ": ReduceLROnPlateau reducing learning rate to " +
         std::string(digits.data(), end) + ".";
}

std::string ReduceLROnPlateau::state() const {
  nlohmann::json s{{"wait", wait_}, {"cooldown_counter", cooldown_counter_}, {"best", nullptr}};
  if (best_) s["best"] = *best_;
  return s.dump();
}

void ReduceLROnPlateau::restore_state(const std::string& json_text) {
  try {
    const nlohmann::json s = nlohmann::json::parse(json_text);
    wait_ = s.at("wait").get<int>();
    cooldown_counter_ = s.at("cooldown_counter").get<int>();
    best_ = s.at("best").is_null() ? std::nullopt : std::optional<double>(s.at("best").get<double>());
  } catch (const nlohmann::json::exception&) {
    throw UsageError("the checkpoint's ReduceLROnPlateau state is malformed");
  }
}

void ReduceLROnPlateauCallback::on_epoch_end(const nn::EpochLogs& logs) {
  const std::optional<float> lr =
      logic_.on_epoch_end(logs.epoch - 1, epoch_values(logs), model_.optimizer().learning_rate());
  if (!lr) return;
  model_.set_learning_rate(*lr);
  if (!verbose_) return;
  std::printf("%s\n", ReduceLROnPlateau::message(logs.epoch - 1, *lr).c_str());
  std::fflush(stdout);
}

std::string ReduceLROnPlateauCallback::save_state() const {
  nlohmann::json s{{"logic", logic_.state()}, {"learning_rate", model_.optimizer().learning_rate()}};
  return s.dump();
}

void ReduceLROnPlateauCallback::load_state(const std::string& json_text) {
  const nlohmann::json s = nlohmann::json::parse(json_text, nullptr, false);
  if (!s.is_object() || !s.contains("logic") || !s["logic"].is_string() || !s.contains("learning_rate") ||
      !s["learning_rate"].is_number() || !(s["learning_rate"].get<double>() > 0))
    throw UsageError("the checkpoint's ReduceLROnPlateau state is malformed");
  logic_.restore_state(s["logic"].get<std::string>());
  model_.set_learning_rate(s["learning_rate"].get<float>());
}

}  // namespace axon::train
