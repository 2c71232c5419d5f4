// The value of the flags that configure a Keras object by its arguments:
// "monitor=val_loss,patience=3,restore_best_weights=true" (--early-stopping,
// --reduce-lr-on-plateau, --model-checkpoint), and "cosine:decay_steps=1000"
// (--lr-schedule: a name, then its arguments). Keys are Keras' argument
// names; a list is written with '/' ("boundaries=1000/2000"). Each unknown
// key, repeated key or malformed value is a UsageError naming the flag.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace axon::train_app {

class KeywordList {
 public:
  // `text` of `flag`, its keys among `allowed` ("none" or "" is an empty list).
  KeywordList(const std::string& text, std::string flag, const std::vector<std::string>& allowed);
  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::string text(const std::string& key, const std::string& fallback) const;
  double number(const std::string& key, double fallback) const;
  std::optional<double> number(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::vector<double> numbers(const std::string& key) const;  // "1000/2000"

 private:
  [[noreturn]] void bad(const std::string& key, const std::string& why) const;
  std::string flag_;
  std::map<std::string, std::string> values_;
};

// "cosine:decay_steps=1000" into ("cosine", "decay_steps=1000").
std::pair<std::string, std::string> split_name(const std::string& text);

}  // namespace axon::train_app
