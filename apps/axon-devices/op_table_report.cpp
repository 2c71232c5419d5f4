// `axon-devices --op-table`: the op table (op_table.hpp) as a Markdown table,
// the op list docs/ops.md shows (a test keeps the two equal).
#include "report.hpp"

#include <axon/op_table.hpp>

#include <string>

namespace axon::devices_app {
namespace {

std::string slots(const TensorSlot* list, int min_count, int max_count) {
  std::string s;
  for (int i = 0; i < kMaxSlots && list[i].name != nullptr; ++i) {
    if (!s.empty()) s += ", ";
    if (i >= min_count) s += "[";
    s += list[i].name;
    if (list[i].dtype != AXON_FLOAT32)
      s += std::string(" ") + (list[i].dtype == kDtypeT ? "T" : dtype_name(static_cast<axon_dtype>(list[i].dtype)));
    if (i >= min_count) s += "]";
    if (max_count < 0 && list[i + 1 < kMaxSlots ? i + 1 : i].name == nullptr) s += ", ...";
  }
  return s.empty() ? "-" : s;
}

std::string dtypes(uint8_t bits) {
  std::string s;
  for (int t = 0; t < kDtypeCount; ++t)
    if (bits & dtype_bit(static_cast<axon_dtype>(t))) (s += s.empty() ? "" : ", ") += dtype_name(static_cast<axon_dtype>(t));
  return s;
}

}  // namespace

void write_op_table(std::ostream& out) {
  out << "| op | inputs | outputs | attributes | kernel dtypes | ABI | what it computes |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const OpSchema& s : kOpTable) {
    std::string what = s.summary;
    if (s.in_place_inputs == 1) what += " (the first input in place)";
    if (s.in_place_inputs > 1) what += " (the first " + std::to_string(s.in_place_inputs) + " inputs in place)";
    if (op_is_optional(s)) what += "; optional, else " + parts_string(s);
    const char* attrs = attr_info(s.attrs).struct_name;
    out << "| `" << s.name << "` | " << slots(s.inputs, s.min_inputs, s.max_inputs) << " | "
        << slots(s.outputs, s.min_outputs, s.max_outputs) << " | " << (attrs[0] ? std::string("`") + attrs + "`" : "-")
        << " | " << dtypes(s.kernel_dtypes) << " | " << s.added.major << "." << s.added.minor << " | " << what << " |\n";
  }
}

}  // namespace axon::devices_app
