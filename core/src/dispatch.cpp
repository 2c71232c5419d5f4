// Op dispatch: placement (scope, priority, soft/strict fallback), staging of
// tensors that live on another device, validation against the op table, the
// placement log, the profiler (time, FLOPs and bytes per op), check-numerics
// and placement recording.
#include "lowering.hpp"

#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/log.hpp>
#include <axon/op_cost.hpp>
#include <axon/op_validate.hpp>
#include <axon/parse.hpp>
#include <axon/placement_plan.hpp>
#include <axon/profile.hpp>
#include <axon/runtime.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace axon {
namespace {

thread_local Device* t_scope = nullptr;

std::mutex g_seen_mutex;
// Each set only grows; it holds one entry per distinct op/layer/device.
std::set<std::tuple<OpId, std::string, const Device*>>& logged_placements() {
  static auto* s = new std::set<std::tuple<OpId, std::string, const Device*>>();
  return *s;
}
std::set<std::pair<OpId, const Device*>>& warned_fallbacks() {
  static auto* s = new std::set<std::pair<OpId, const Device*>>();
  return *s;
}

axon_dtype call_dtype(const OpCall& call) {
  if (!call.inputs.empty() && call.inputs[0] != nullptr) return call.inputs[0]->dtype();
  if (!call.outputs.empty() && call.outputs[0] != nullptr) return call.outputs[0]->dtype();
  return AXON_FLOAT32;
}

std::string devices_with_kernel(OpId op, axon_dtype dtype) {
  std::string list;
  for (Device* d : Runtime::get().devices())
    if (d->has_kernel(op, dtype)) {
      if (!list.empty()) list += ", ";
      list += d->name();
    }
  return list.empty() ? "(none)" : list;
}

struct Placement {
  Device* device = nullptr;     // where it runs (nullptr: nowhere, only while recording)
  Device* requested = nullptr;  // where it was meant to run
  bool lowered = false;         // a fused op run as its parts on `device`
};

// A fused op goes where its first part (the convolution, the product, ...)
// would go: on a device that lacks the fused op but has that part, the parts
// run there (each part it lacks falls back on its own); on a device without
// the first part, the fused op falls back whole, taking its other parts
// along, unless no CPU has it either (or placement is strict).
bool lower_on(OpId op, const Device& d, axon_dtype dtype) {
  if (!lowerable(op) || d.has_kernel(op, dtype)) return false;
  // Strict placement borrows no fused op from the CPU: its parts stay here.
  if (Runtime::get().config().strict_placement) return true;
  if (d.has_kernel(op_schema(op).decomposes_into.ops[0], dtype)) return true;
  const Device* cpu = Runtime::get().cpu_device();
  return cpu == nullptr || !cpu->has_kernel(op, dtype);
}

// The device that runs the op when the requested one has no kernel, or
// declines this call (`declined`: why). While recording, nothing throws and
// nothing is logged: the recorder lists it all.
Placement fall_back(OpId op, Device& requested, axon_dtype dtype, bool recording,
                    const std::string* declined = nullptr) {
  const Runtime& rt = Runtime::get();
  const std::string what = declined != nullptr
                               ? std::string("op ") + op_name(op) + ": " + requested.name() + " declines this call (" +
                                     *declined + ")"
                               : std::string("op ") + op_name(op) + " has no " + dtype_name(dtype) + " kernel on " +
                                     requested.name();
  if (rt.config().strict_placement) {
    if (recording) return {nullptr, &requested};
    throw RuntimeError(what + "; devices with this kernel: " + devices_with_kernel(op, dtype));
  }
  Device* cpu = rt.cpu_device();
  if (cpu == nullptr || cpu == &requested || !cpu->has_kernel(op, dtype)) {
    if (recording) return {nullptr, &requested};
    throw RuntimeError(what + " and no CPU device to fall back to has one; devices with this kernel: " +
                       devices_with_kernel(op, dtype));
  }
  if (!recording) {
    bool first;
    {
      std::lock_guard<std::mutex> lock(g_seen_mutex);
      first = warned_fallbacks().emplace(op, &requested).second;
    }
    if (first && declined != nullptr)
      log::warning("placement", what + "; running it on " + cpu->name() +
                                    " instead. Use --strict-placement to make this an error.");
    else if (first)
      log::warning("placement", std::string("op ") + op_name(op) + " has no kernel on " + requested.name() + " (" +
                                    dtype_name(dtype) + "); running it on " + cpu->name() +
                                    " instead. Use --strict-placement to make this an error.");
  }
  return {cpu, &requested};
}

Placement place_with(OpId op, axon_dtype dtype, bool recording) {
  if (Device* scoped = DeviceScope::current()) {
    if (scoped->has_kernel(op, dtype)) return {scoped, scoped};
    if (lower_on(op, *scoped, dtype)) return {scoped, scoped, true};
    return fall_back(op, *scoped, dtype, recording);
  }
  const Runtime& rt = Runtime::get();
  for (Device* d : rt.devices()) {
    if (d->has_kernel(op, dtype)) return {d, d};
    if (lower_on(op, *d, dtype)) return {d, d, true};
  }
  if (rt.devices().empty()) throw RuntimeError(std::string("op ") + op_name(op) + ": no devices are available");
  if (recording) return {nullptr, &rt.default_device()};
  throw RuntimeError(std::string("op ") + op_name(op) + " has no " + dtype_name(dtype) + " kernel on any device");
}

void log_placement(const OpCall& call, const Device& d) {
  {
    std::lock_guard<std::mutex> lock(g_seen_mutex);
    if (!logged_placements().emplace(call.op, std::string(call.layer), &d).second) return;
  }
  std::string line = std::string("Executing op ") + op_name(call.op);
  if (!call.layer.empty()) line += " (" + parse::one_line(std::string(call.layer)) + ")";
  line += " in device " + d.name() + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// The op table lists the part behind a fused op's optional trailing output
// last (_FusedConv2DMaxPoolGrad's dx: Conv2DBackpropInput). A call that
// leaves that output out (the first layer needs no dx) does not need it;
// none when the call needs every part, or does not say (no outputs given).
std::optional<OpId> unused_part(const OpCall& call) {
  const OpSchema& s = op_schema(call.op);
  if (!op_is_optional(s) || s.min_outputs == s.max_outputs || call.outputs.empty()) return std::nullopt;
  const size_t last = static_cast<size_t>(s.max_outputs) - 1;
  if (call.outputs.size() > last && call.outputs[last] != nullptr && call.outputs[last]->defined()) return std::nullopt;
  return s.decomposes_into.ops[s.decomposes_into.count - 1];
}

// A fused op that left its device: the ops of its decomposition the call
// needs, split into those the requested device has (they moved along) and
// those it lacks.
void split_parts(const OpCall& call, const Device& requested, axon_dtype dtype, PlannedOp& planned) {
  const OpParts& parts = op_schema(call.op).decomposes_into;
  const std::optional<OpId> unused = unused_part(call);
  for (int i = 0; i < parts.count; ++i) {
    if (parts.ops[i] == unused) continue;
    const char* name = op_name(parts.ops[i]);
    if (requested.has_kernel(parts.ops[i], dtype))
      (planned.moved_with += planned.moved_with.empty() ? "" : ", ") += name;
    else
      planned.parts_missing.emplace_back(name);
  }
}

void record(PlacementRecorder& rec, const OpCall& call, axon_dtype dtype, const Placement& p) {
  PlannedOp planned;
  planned.op = op_name(call.op);
  planned.dtype = dtype;
  planned.layer = std::string(call.layer);
  planned.requested = p.requested->name();
  planned.device = p.device != nullptr ? p.device->name() : "";
  planned.fallback = p.device != p.requested;
  if (planned.fallback && op_is_optional(op_schema(call.op))) split_parts(call, *p.requested, dtype, planned);
  // The fused op noted as a fallback before it runs (note_fused_path) did
  // not know which outputs the call passes: now it does.
  if (const std::optional<OpId> unused = unused_part(call))
    rec.leave_out_part(planned.op, planned.layer, op_name(*unused));
  rec.record(std::move(planned));
}

// "x [2000]" for a declined call's message.
std::string input_shapes(const OpCall& call) {
  const OpSchema& s = op_schema(call.op);
  std::string out;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor* t = call.inputs[i];
    if (t == nullptr || !t->defined()) continue;
    (out += out.empty() ? "" : ", ") +=
        std::string(input_slot(s, static_cast<int>(i)).name) + " " + shape_string(t->shape());
  }
  return out;
}

void copy_between(const Tensor& src, Tensor& dst) {
  if (src.bytes() == 0) return;
  std::vector<std::byte> host(src.bytes());
  src.copy_to_host(host.data(), host.size());
  dst.copy_from_host(host.data(), host.size());
}

// check-numerics: the first NaN or Inf among the op's float32 outputs (and
// the inputs it updates in place) fails the run, naming where it appeared.
void check_numerics(const OpCall& call, Device& d) {
  d.synchronize();
  const OpSchema& s = op_schema(call.op);
  auto check = [&](const Tensor* t, const char* kind, int index, const char* slot) {
    if (t == nullptr || !t->defined() || t->dtype() != AXON_FLOAT32 || t->numel() == 0) return;
    std::vector<float> host(static_cast<size_t>(t->numel()));
    t->copy_to_host(host.data(), host.size() * sizeof(float));
    for (size_t i = 0; i < host.size(); ++i)
      if (!std::isfinite(host[i])) {
        std::string where = std::string("check-numerics: op ") + s.name;
        if (!call.layer.empty()) (where += " (layer ").append(call.layer) += ")";
        throw RuntimeError(where + " on " + d.name() + " produced " + (std::isnan(host[i]) ? "nan" : "inf") + " in " +
                           kind + " " + std::to_string(index) + " (" + slot + ") at element " + std::to_string(i));
      }
  };
  for (size_t i = 0; i < call.outputs.size(); ++i)
    check(call.outputs[i], "output", static_cast<int>(i), output_slot(s, static_cast<int>(i)).name);
  for (int i = 0; i < s.in_place_inputs && i < static_cast<int>(call.inputs.size()); ++i)
    check(call.inputs[i], "input", i, input_slot(s, i).name);
}

// Room for the tensors of one call without touching the heap (AddN may pass
// more; then the vector takes them).
template <class T, size_t N>
class SmallArray {
 public:
  explicit SmallArray(size_t n) : n_(n) {
    if (n > N) heap_.resize(n);
  }
  T* data() { return n_ > N ? heap_.data() : inline_; }
  T& operator[](size_t i) { return data()[i]; }

 private:
  size_t n_;
  T inline_[N];  // left uninitialised: every used slot is written
  std::vector<T> heap_;
};

// The call as the C ABI passes it, on the caller's tensors (absent ones as
// zero views); execute() points staged tensors elsewhere.
struct CallViews {
  explicit CallViews(const OpCall& call) : in(call.inputs.size()), out(call.outputs.size()) {
    for (size_t i = 0; i < call.inputs.size(); ++i) in[i] = view_of(call.inputs[i]);
    for (size_t i = 0; i < call.outputs.size(); ++i) out[i] = view_of(call.outputs[i]);
    const OpSchema& schema = op_schema(call.op);
    kc.struct_size = sizeof kc;
    kc.op = schema.name;
    kc.num_inputs = static_cast<int32_t>(call.inputs.size());
    kc.inputs = in.data();
    kc.num_outputs = static_cast<int32_t>(call.outputs.size());
    kc.outputs = out.data();
    kc.attrs = call.attrs;
  }
  CallViews(const CallViews&) = delete;  // kc points into in and out
  CallViews& operator=(const CallViews&) = delete;
  static axon_tensor view_of(const Tensor* t) { return t == nullptr || !t->defined() ? axon_tensor{} : t->c_view(); }
  SmallArray<axon_tensor, 8> in, out;
  axon_kernel_call kc{};
};

}  // namespace

DeviceScope::DeviceScope(Device& device) : previous_(t_scope) { t_scope = &device; }
DeviceScope::DeviceScope(const std::string& device_name) : DeviceScope(Runtime::get().device(device_name)) {}
DeviceScope::~DeviceScope() { t_scope = previous_; }
Device* DeviceScope::current() { return t_scope; }

Device& place(const OpCall& call) {
  const axon_dtype dtype = call_dtype(call);
  PlacementRecorder* rec = PlacementRecorder::current();
  Placement p = place_with(call.op, dtype, rec != nullptr);
  // A layer asking where an op would go is deciding its path: a fallback
  // here is a kernel the requested device lacks, even if the layer then runs
  // a fused op instead.
  if (rec != nullptr && p.device != p.requested) record(*rec, call, dtype, p);
  return p.device != nullptr ? *p.device : *p.requested;
}

void log_placement_note(const std::string& line) {
  if (!Runtime::get().config().log_device_placement) return;
  static auto* seen = new std::set<std::string>();
  {
    std::lock_guard<std::mutex> lock(g_seen_mutex);
    if (!seen->insert(line).second) return;
  }
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

void note_fused_path(OpId fused_op, Device& chosen, std::string_view layer, axon_dtype dtype) {
  PlacementRecorder* rec = PlacementRecorder::current();
  if (rec == nullptr) return;
  Device* requested = DeviceScope::current();
  if (requested == nullptr) requested = &Runtime::get().default_device();
  if (requested == &chosen) return;
  OpCall call;
  call.op = fused_op;
  call.layer = layer;
  record(*rec, call, dtype, {&chosen, requested});
}

namespace {

// Runs the call on `d`: tensors on another device staged there (through
// host memory), the call validated against the op table, timed when
// profiling, checked for NaN and Inf when asked.
void execute(const OpCall& call, CallViews& v, Device& d, axon_dtype dtype) {
  const Config& config = Runtime::get().config();
  if (config.log_device_placement) log_placement(call, d);
  const size_t n_in = call.inputs.size(), n_out = call.outputs.size();
  std::vector<Tensor> staged_in, staged_out;  // empty unless a tensor lives elsewhere
  for (size_t i = 0; i < n_in; ++i) {
    const Tensor* t = call.inputs[i];
    if (t == nullptr || !t->defined() || &t->device() == &d) continue;
    staged_in.resize(n_in);
    staged_in[i] = t->to(d);
    v.in[i] = staged_in[i].c_view();
  }
  for (size_t i = 0; i < n_out; ++i) {
    Tensor* t = call.outputs[i];
    if (t == nullptr || !t->defined() || &t->device() == &d) continue;
    staged_out.resize(n_out);
    staged_out[i] = Tensor(d, t->dtype(), t->shape());
    v.out[i] = staged_out[i].c_view();
  }

  const OpSchema& schema = op_schema(call.op);
  if (std::string why; !validate_call(schema, v.kc, &why))
    throw RuntimeError(call.layer.empty() ? why : why + " (layer " + std::string(call.layer) + ")");

  if (op_profiling()) {
    auto t0 = std::chrono::steady_clock::now();
    d.launch(v.kc, call.op, dtype);
    d.synchronize();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    record_op_time(schema.name, d.name(), call.layer, seconds, op_cost(call.op, v.kc));
  } else {
    d.launch(v.kc, call.op, dtype);
  }

  if (!staged_out.empty())
    for (size_t i = 0; i < n_out; ++i)
      if (staged_out[i].defined()) copy_between(staged_out[i], *call.outputs[i]);
  if (!staged_in.empty())
    for (int i = 0; i < schema.in_place_inputs && i < static_cast<int>(n_in); ++i)
      if (staged_in[i].defined()) {
        Tensor target = *call.inputs[i];  // shares the caller's buffer
        copy_between(staged_in[i], target);
      }
  if (config.check_numerics) check_numerics(call, d);
}

}  // namespace

void run(const OpCall& call) {
  const axon_dtype dtype = call_dtype(call);
  PlacementRecorder* rec = PlacementRecorder::current();
  Placement p = place_with(call.op, dtype, rec != nullptr);
  // The parts record (or run) themselves.
  if (p.lowered) return run_lowered(call, *p.device);
  CallViews v(call);
  // A device may decline this call's shapes or attributes up front: it then
  // goes where an op without a kernel would.
  if (p.device != nullptr && !p.device->supports(v.kc)) {
    const std::string why = "it does not run " + std::string(op_name(call.op)) + " on " + input_shapes(call);
    p = fall_back(call.op, *p.device, dtype, rec != nullptr, &why);
  }
  if (rec != nullptr) return record(*rec, call, dtype, p);
  try {
    execute(call, v, *p.device, dtype);
  } catch (const KernelDeclined& e) {
    // Declined at launch (no algorithm for these shapes), nothing written.
    const std::string why = e.what();
    const Placement q = fall_back(call.op, *p.device, dtype, false, &why);
    CallViews again(call);
    execute(call, again, *q.device, dtype);
  }
}

}  // namespace axon
