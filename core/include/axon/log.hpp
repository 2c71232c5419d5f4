// One logger for the runtime and, through the host API, for plugins. Level
// from AXON_LOG_LEVEL (debug, info, warning, error; default warning) or
// Config::log_level. Lines go to stderr as "axon: W plugin-name: message".
#pragma once

#include <string>

namespace axon::log {

enum class Level { debug = 0, info = 1, warning = 2, error = 3 };

void set_level(Level level);
// "debug", "info", "warning" (or "warn"), "error"; throws UsageError otherwise.
Level parse_level(const std::string& text);
Level level();
bool enabled(Level level);
// `tag` names the source (a plugin name, "loader", "placement"); may be empty.
void write(Level level, const std::string& tag, const std::string& message);

inline void debug(const std::string& tag, const std::string& m) { write(Level::debug, tag, m); }
inline void info(const std::string& tag, const std::string& m) { write(Level::info, tag, m); }
inline void warning(const std::string& tag, const std::string& m) { write(Level::warning, tag, m); }
inline void error(const std::string& tag, const std::string& m) { write(Level::error, tag, m); }

}  // namespace axon::log
