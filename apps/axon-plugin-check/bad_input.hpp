// Malformed kernel calls: each kind of mistake a host could make, applied to
// a well-formed call of the op. Every one must be refused with
// AXON_INVALID_ARGUMENT, by the kernel call or, on a device that validates
// asynchronously, by the next synchronize().
#pragma once

#include "cases.hpp"

#include <string>
#include <vector>

namespace axon::plugin_check {

enum class BadKind { wrong_rank, wrong_dtype, short_attrs, null_data, wrong_input_count };
inline constexpr BadKind kBadKinds[] = {BadKind::wrong_rank, BadKind::wrong_dtype, BadKind::short_attrs,
                                        BadKind::null_data, BadKind::wrong_input_count};

const char* bad_kind_name(BadKind k);  // "wrong rank", ...

// "bad input: Conv2D wrong rank"
std::string bad_input_name(const OpSchema& op, BadKind k);

// A kernel call under construction: the tensors, a copy of the attributes,
// and the input count passed.
struct BadCall {
  const OpSchema* op = nullptr;
  std::vector<axon_tensor> in, out;
  AnyAttrs attrs;
  int num_inputs = 0;
  axon_tensor extra{};  // the surplus input of wrong_input_count

  axon_kernel_call call() const;  // points into this object
};

// The well-formed call of `base` with the given data pointers (one per input
// and output; extra: memory for a surplus input shaped like the last input,
// or a float32 [1] for an op without inputs).
BadCall well_formed(const Case& base, const std::vector<void*>& in_data, const std::vector<void*>& out_data,
                    void* extra);

// Applies the mistake; false when it cannot make this op's call invalid (the
// attributes of an op that takes none, the rank of Fill's output): the op's
// validator (axon/op_validate.hpp) must refuse every call this leaves.
bool make_bad(BadCall& c, BadKind kind);

}  // namespace axon::plugin_check
