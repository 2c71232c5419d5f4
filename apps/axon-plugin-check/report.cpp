#include "report.hpp"

#include <axon/json_text.hpp>

#include <cstdio>

namespace axon::plugin_check {
namespace {

const char* word(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::skip: return "SKIP";
  }
  return "?";
}

// One line whatever a plugin's message holds.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  return s;
}

std::string quote(const std::string& s) { return cli::json_string(s); }

std::string lower(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

void Report::add(Status s, std::string name, std::string detail) {
  checks_.push_back({one_line(std::move(name)), s, one_line(std::move(detail))});
  if (json_) return;
  const Check& c = checks_.back();
  if (s == Status::pass || c.detail.empty())
    std::printf("%s %s\n", word(s), c.name.c_str());
  else
    std::printf("%s %s: %s\n", word(s), c.name.c_str(), c.detail.c_str());
  std::fflush(stdout);
}

int Report::count(Status s) const {
  int n = 0;
  for (const Check& c : checks_) n += c.status == s;
  return n;
}

void Report::finish(double seconds) {
  const int passed = count(Status::pass), failed = count(Status::fail), skipped = count(Status::skip);
  if (!json_) {
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return;
  }
  std::string o = "{\n  \"plugin\": ";
  if (facts.loaded) {
    o += "{\"path\": " + quote(facts.path) + ", \"name\": " + quote(facts.name) + ", \"version\": " +
         quote(facts.version) + ", \"device_type\": " + quote(facts.device_type) +
         ", \"device_count\": " + std::to_string(facts.device_count) +
         ", \"unavailable_reason\": " + quote(facts.unavailable_reason) + ", \"excluded_devices\": [";
    for (size_t i = 0; i < facts.excluded.size(); ++i) o += (i ? ", " : "") + quote(facts.excluded[i]);
    o += "]}";
  } else {
    o += "null";
  }
  o += ",\n  \"device\": " + (facts.device.empty() ? std::string("null") : quote(facts.device));
  o += ",\n  \"checks\": [";
  for (size_t i = 0; i < checks_.size(); ++i) {
    const Check& c = checks_[i];
    o += (i ? ",\n    " : "\n    ");
    o += "{\"name\": " + quote(c.name) + ", \"status\": " + quote(lower(word(c.status))) +
         ", \"detail\": " + quote(c.detail) + "}";
  }
  o += checks_.empty() ? "]" : "\n  ]";
  char tail[160];
  std::snprintf(tail, sizeof tail, ",\n  \"summary\": {\"passed\": %d, \"failed\": %d, \"skipped\": %d},\n  \"seconds\": %.2f\n}\n",
                passed, failed, skipped, seconds);
  o += tail;
  std::fputs(o.c_str(), stdout);
}

}  // namespace axon::plugin_check
