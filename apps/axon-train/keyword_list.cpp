#include "keyword_list.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace axon::train_app {

KeywordList::KeywordList(const std::string& text, std::string flag, const std::vector<std::string>& allowed)
    : flag_(std::move(flag)) {
  if (text.empty() || text == "none") return;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw UsageError(flag_ + ": '" + parse::printable(item) + "' is not key=value");
    const std::string key = item.substr(0, eq);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string keys;
      for (const std::string& k : allowed) keys += (keys.empty() ? "" : ", ") + k;
      throw UsageError(flag_ + ": unknown setting '" + parse::printable(key) + "'; it takes " + keys);
    }
    if (!values_.emplace(key, item.substr(eq + 1)).second) throw UsageError(flag_ + ": " + key + " is given twice");
    at = comma + 1;
  }
}

void KeywordList::bad(const std::string& key, const std::string& why) const {
  throw UsageError(flag_ + ": " + key + "=" + parse::printable(values_.at(key)) + " " + why);
}

std::string KeywordList::text(const std::string& key, const std::string& fallback) const {
  return has(key) ? values_.at(key) : fallback;
}

std::optional<double> KeywordList::number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const std::string& v = values_.at(key);
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || errno != 0 || !std::isfinite(d)) bad(key, "is not a number");
  return d;
}

double KeywordList::number(const std::string& key, double fallback) const { return number(key).value_or(fallback); }

int64_t KeywordList::integer(const std::string& key, int64_t lo, int64_t hi, int64_t fallback) const {
  if (!has(key)) return fallback;
  return parse::integer(flag_ + " " + key, values_.at(key), lo, hi);
}

bool KeywordList::boolean(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  return parse::boolean(flag_ + " " + key, values_.at(key));
}

std::vector<double> KeywordList::numbers(const std::string& key) const {
  std::vector<double> out;
  if (!has(key)) return out;
  const std::string& v = values_.at(key);
  size_t at = 0;
  while (at <= v.size()) {
    const size_t slash = std::min(v.find('/', at), v.size());
    const std::string item = v.substr(at, slash - at);
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || errno != 0 || !std::isfinite(d))
      bad(key, "is not a list of numbers separated by '/'");
    out.push_back(d);
    at = slash + 1;
  }
  return out;
}

std::pair<std::string, std::string> split_name(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return {text, ""};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

}  // namespace axon::train_app
