// The checks' results: one line each as they come (PASS name, FAIL name:
// why, SKIP name: why) and the summary, or one JSON document at the end.
#pragma once

#include <string>
#include <vector>

namespace axon::plugin_check {

enum class Status { pass, fail, skip };

struct Check {
  std::string name;
  Status status = Status::pass;
  std::string detail;
};

// What the loader said about the plugin (for the JSON document).
struct PluginFacts {
  std::string path;
  bool loaded = false;
  std::string name, version, device_type, unavailable_reason;
  int device_count = 0;
  std::vector<std::string> excluded;  // "<name>: <reason>"
  std::string device;                 // the device checked, "" when none
};

class Report {
 public:
  explicit Report(bool json) : json_(json) {}

  void add(Status s, std::string name, std::string detail = "");
  void pass(std::string name, std::string detail = "") { add(Status::pass, std::move(name), std::move(detail)); }
  void fail(std::string name, std::string detail) { add(Status::fail, std::move(name), std::move(detail)); }
  void skip(std::string name, std::string detail) { add(Status::skip, std::move(name), std::move(detail)); }

  int count(Status s) const;
  const std::vector<Check>& checks() const { return checks_; }
  PluginFacts facts;

  // The summary line "N passed, N failed, N skipped", or the JSON document.
  void finish(double seconds);

 private:
  bool json_;
  std::vector<Check> checks_;
};

}  // namespace axon::plugin_check
