// The process-wide logger: one atomic level, one write per line so lines from
// several threads (and plugins) never interleave.
#include <axon/log.hpp>

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace axon::log {
namespace {

Level level_from_env() {
  const char* v = std::getenv("AXON_LOG_LEVEL");
  if (v == nullptr) return Level::warning;
  // Config::from_environment reports bad values; here we only pick a default.
  if (std::strcmp(v, "debug") == 0) return Level::debug;
  if (std::strcmp(v, "info") == 0) return Level::info;
  if (std::strcmp(v, "error") == 0) return Level::error;
  return Level::warning;
}

std::atomic<int>& current() {
  static std::atomic<int> l{static_cast<int>(level_from_env())};
  return l;
}

char letter(Level l) {
  switch (l) {
    case Level::debug: return 'D';
    case Level::info: return 'I';
    case Level::warning: return 'W';
    case Level::error: return 'E';
  }
  return '?';
}

}  // namespace

void set_level(Level l) { current().store(static_cast<int>(l), std::memory_order_relaxed); }
Level level() { return static_cast<Level>(current().load(std::memory_order_relaxed)); }
bool enabled(Level l) { return static_cast<int>(l) >= current().load(std::memory_order_relaxed); }

void write(Level l, const std::string& tag, const std::string& message) {
  if (!enabled(l)) return;
  std::string line = "axon: ";
  line += letter(l);
  line += ' ';
  if (!tag.empty()) {
    line += parse::one_line(tag);
    line += ": ";
  }
  line += parse::one_line(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}


Level parse_level(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (t == "debug") return Level::debug;
  if (t == "info") return Level::info;
  if (t == "warning" || t == "warn") return Level::warning;
  if (t == "error") return Level::error;
  throw UsageError("log level '" + parse::printable(text) + "' is not one of debug, info, warning, error");
}

}  // namespace axon::log
