#include "bad_input.hpp"

#include <axon/op_validate.hpp>

namespace axon::plugin_check {

const char* bad_kind_name(BadKind k) {
  switch (k) {
    case BadKind::wrong_rank: return "wrong rank";
    case BadKind::wrong_dtype: return "wrong dtype";
    case BadKind::short_attrs: return "short attribute struct";
    case BadKind::null_data: return "null data";
    case BadKind::wrong_input_count: return "wrong input count";
  }
  return "?";
}

std::string bad_input_name(const OpSchema& op, BadKind k) {
  return std::string("bad input: ") + op.name + " " + bad_kind_name(k);
}

axon_kernel_call BadCall::call() const {
  axon_kernel_call c{};
  c.struct_size = sizeof c;
  c.op = op->name;
  c.num_inputs = num_inputs;
  c.inputs = in.data();
  c.num_outputs = static_cast<int32_t>(out.size());
  c.outputs = const_cast<axon_tensor*>(out.data());
  c.attrs = attrs_ptr(attrs);
  return c;
}

BadCall well_formed(const Case& base, const std::vector<void*>& in_data, const std::vector<void*>& out_data,
                    void* extra) {
  BadCall c;
  c.op = base.op;
  for (size_t i = 0; i < base.inputs.size(); ++i) c.in.push_back(base.inputs[i].view(in_data.at(i)));
  for (size_t i = 0; i < base.outputs.size(); ++i) c.out.push_back(base.outputs[i].view(out_data.at(i)));
  c.attrs = base.attrs;
  c.num_inputs = static_cast<int>(c.in.size());
  if (!base.inputs.empty())
    c.extra = base.inputs.back().view(extra);
  else
    c.extra = HostTensor(AXON_FLOAT32, {1}).view(extra);
  return c;
}

namespace {

bool invalid(const BadCall& c) {
  const axon_kernel_call call = c.call();
  return !validate_call(*c.op, call, nullptr);
}

int64_t numel(const axon_tensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

// Tries `change` on each tensor in turn, keeping the first that makes the
// call invalid.
template <class F>
bool first_that_breaks(BadCall& c, std::vector<axon_tensor*> order, F&& change) {
  for (axon_tensor* t : order) {
    const axon_tensor saved = *t;
    if (change(*t) && invalid(c)) return true;
    *t = saved;
  }
  return false;
}

}  // namespace

bool make_bad(BadCall& c, BadKind kind) {
  std::vector<axon_tensor*> ins_then_outs, outs_then_ins_reversed;
  for (axon_tensor& t : c.in) ins_then_outs.push_back(&t);
  for (axon_tensor& t : c.out) ins_then_outs.push_back(&t), outs_then_ins_reversed.push_back(&t);
  for (size_t i = c.in.size(); i-- > 0;) outs_then_ins_reversed.push_back(&c.in[i]);

  switch (kind) {
    case BadKind::wrong_rank:  // one more dimension, of size 1: the same bytes
      return first_that_breaks(c, ins_then_outs, [](axon_tensor& t) {
        if (t.rank < 0 || t.rank >= AXON_MAX_RANK) return false;
        t.dims[t.rank++] = 1;
        return true;
      });
    case BadKind::wrong_dtype:  // float32 <-> int32: the same size, whatever is read
      return first_that_breaks(c, outs_then_ins_reversed, [](axon_tensor& t) {
        t.dtype = t.dtype == AXON_FLOAT32 ? AXON_INT32 : AXON_FLOAT32;
        return true;
      });
    case BadKind::short_attrs: {
      void* a = const_cast<void*>(attrs_ptr(c.attrs));
      if (a == nullptr) return false;
      *static_cast<size_t*>(a) = attr_info(c.op->attrs).min_size - 1;  // every struct begins with struct_size
      return invalid(c);
    }
    case BadKind::null_data:
      return first_that_breaks(c, ins_then_outs, [](axon_tensor& t) {
        if (numel(t) <= 0) return false;
        t.data = nullptr;
        return true;
      });
    case BadKind::wrong_input_count:
      if (c.op->max_inputs < 0) {
        c.num_inputs = 0;  // AddN: none at all
      } else {
        c.in.push_back(c.extra);
        c.num_inputs = static_cast<int>(c.in.size());
      }
      return invalid(c);
  }
  return false;
}

}  // namespace axon::plugin_check
