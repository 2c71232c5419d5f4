#include "probes.hpp"

#include "bad_input.hpp"
#include "device_calls.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

namespace axon::plugin_check {
namespace {

constexpr const char* kFlag = "--probe-worker";

struct Outcome {
  char code;  // P, F, S, A (see probes.hpp)
  std::string detail;
};

struct Probe {
  std::string name;
  std::function<Outcome()> run;
};

class Pipe {
 public:
  explicit Pipe(int fd) : fd_(fd) {}
  void line(std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    s += '\n';
    const char* p = s.data();
    size_t left = s.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);  // the checker is gone
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

axon_error fresh_error() {
  axon_error e{};
  e.struct_size = sizeof e;
  return e;
}

bool has_message(const axon_error& e) { return strnlen(e.message, sizeof e.message) > 0; }

// ------------------------------------------------------------------ allocator

// The ABI leaves 0 bytes to the plugin (axon itself never asks for them):
// any answer will do but a crash, or a failure without a message.
Outcome allocate_zero(const axon_device_api& api) {
  void* p = nullptr;
  axon_error err = fresh_error();
  const axon_status s = api.allocate(api.device_ctx, 0, &p, &err);
  if (s != AXON_OK)
    return has_message(err) ? Outcome{'P', "refused: " + status_text(s, err)}
                            : Outcome{'F', std::string(axon_status_name(s)) + " with no message"};
  if (p == nullptr) return {'P', "AXON_OK and NULL"};
  api.deallocate(api.device_ctx, p);
  return {'P', "AXON_OK and a pointer, which deallocate took back"};
}

// Two allocations of 3/4 of the limit the worker's device was opened with.
Outcome memory_limit(const axon_device_api& api) {
  const size_t limit = static_cast<size_t>(kProbeLimitMb) << 20, part = limit / 4 * 3;
  const std::string lim = std::to_string(kProbeLimitMb) + " MiB";
  DeviceMemory mem(api);
  try {
    mem.allocate(part);
  } catch (const CallFailed& e) {
    return {'F', "under AXON_MEMORY_LIMIT with " + lim + ", the first " + std::to_string(part >> 20) +
                     " MiB could not be allocated: " + e.what()};
  }
  void* p = nullptr;
  axon_error err = fresh_error();
  const axon_status s = api.allocate(api.device_ctx, part, &p, &err);
  if (s == AXON_OUT_OF_MEMORY)
    return has_message(err) ? Outcome{'P', "past the " + lim + " limit: " + status_text(s, err)}
                            : Outcome{'F', "AXON_OUT_OF_MEMORY past the " + lim + " limit, with no message"};
  if (s != AXON_OK)
    return {'F', "past the " + lim + " limit allocate returned " + status_text(s, err) + ", expected AXON_OUT_OF_MEMORY"};
  api.deallocate(api.device_ctx, p);
  axon_memory_info info{};
  info.struct_size = sizeof info;
  err = fresh_error();
  if (api.memory_info != nullptr && api.memory_info(api.device_ctx, &info, &err) == AXON_OK && info.limit != 0)
    return {'F', "memory_info reports a limit of " + std::to_string(info.limit) + " bytes, yet " +
                     std::to_string(2 * part) + " bytes were handed out"};
  return {'S', "the device does not honour AXON_MEMORY_LIMIT (" + std::to_string(2 * part) + " bytes handed out under " +
                   lim + "; the CPU and reference plugins, whose memory is the host's, ignore it too)"};
}

Outcome absurd_allocation(const axon_device_api& api) {
  void* p = nullptr;
  axon_error err = fresh_error();
  const axon_status s = api.allocate(api.device_ctx, size_t{1} << 60, &p, &err);
  if (s == AXON_OUT_OF_MEMORY)
    return has_message(err) ? Outcome{'P', status_text(s, err)} : Outcome{'F', "AXON_OUT_OF_MEMORY with no message"};
  if (s == AXON_OK) {
    if (p != nullptr) api.deallocate(api.device_ctx, p);
    return {'F', "AXON_OK for 2^60 bytes"};
  }
  return {'F', "returned " + status_text(s, err) + ", expected AXON_OUT_OF_MEMORY"};
}

// ------------------------------------------------------------------ bad input

Outcome bad_input(const axon_device_api& api, axon_kernel_fn fn, const Case& base, BadKind kind) {
  DeviceMemory mem(api);
  // 8 bytes per element: room for any dtype a mistake may claim.
  auto room = [&](int64_t numel) { return numel > 0 ? mem.allocate(static_cast<size_t>(numel) * 8) : nullptr; };
  std::vector<void*> in, out;
  for (const HostTensor& t : base.inputs) {
    in.push_back(room(t.numel()));
    mem.upload(in.back(), t.bytes.data(), t.bytes.size());
  }
  for (const HostTensor& t : base.outputs) out.push_back(room(t.numel()));
  void* extra = room(base.inputs.empty() ? 1 : base.inputs.back().numel());
  if (extra == nullptr) extra = room(1);
  BadCall c = well_formed(base, in, out, extra);
  make_bad(c, kind);
  const axon_kernel_call call = c.call();
  axon_error err = fresh_error();
  const axon_status s = fn(api.device_ctx, &call, &err);
  // With events, a queued call's error comes back first from an event
  // recorded after it (as a host waiting for one point sees it).
  axon_status ev = AXON_OK;
  axon_error ev_err = fresh_error();
  if (s == AXON_OK && api.event_create != nullptr) {
    axon_event e = nullptr;
    client::check(api.event_create(api.device_ctx, &e, &ev_err), ev_err, "event_create");
    ev = api.event_record(api.device_ctx, e, nullptr, &ev_err);
    if (ev == AXON_OK) ev = api.event_synchronize(api.device_ctx, e, &ev_err);
    api.event_destroy(api.device_ctx, e);
  }
  axon_error sync_err = fresh_error();
  const axon_status sync = api.synchronize(api.device_ctx, &sync_err);
  if (s == AXON_INVALID_ARGUMENT) return {'P', "refused by the kernel call: " + status_text(s, err)};
  if (s != AXON_OK) return {'F', "the kernel returned " + status_text(s, err) + ", expected AXON_INVALID_ARGUMENT"};
  if (ev == AXON_INVALID_ARGUMENT) return {'P', "reported by an event after the call: " + status_text(ev, ev_err)};
  if (ev != AXON_OK)
    return {'F', "the kernel returned AXON_OK and an event after it " + status_text(ev, ev_err) +
                     ", expected AXON_INVALID_ARGUMENT"};
  if (sync == AXON_INVALID_ARGUMENT && api.event_create != nullptr)
    return {'V', "reported by synchronize(), but an event recorded after the call was reached without it"};
  if (sync == AXON_INVALID_ARGUMENT)
    return {'P', "reported by synchronize(): " + status_text(sync, sync_err)};
  if (sync != AXON_OK)
    return {'F', "the kernel returned AXON_OK and synchronize() " + status_text(sync, sync_err) +
                     ", expected AXON_INVALID_ARGUMENT"};
  return {'A', "the kernel and the next synchronize() both returned AXON_OK"};
}

std::vector<Probe> list_probes(const axon_device_api& api, const std::string& only_op) {
  std::vector<Probe> probes;
  if (only_op.empty()) {
    probes.push_back({"allocator: allocate(0)", [&api] { return allocate_zero(api); }});
    probes.push_back({"allocator: memory limit (AXON_MEMORY_LIMIT, " + std::to_string(kProbeLimitMb) + " MiB)",
                      [&api] { return memory_limit(api); }});
    probes.push_back({"allocator: out of memory (2^60 bytes)", [&api] { return absurd_allocation(api); }});
  }
  for (const OpSchema& op : kOpTable) {
    if (!only_op.empty() && only_op != op.name) continue;
    axon_kernel_fn fn = nullptr;
    axon_dtype key = AXON_FLOAT32;
    for (int t = 0; t < kDtypeCount && fn == nullptr; ++t) {
      key = static_cast<axon_dtype>(t);
      if (kernel_dtype_allowed(op, key)) fn = api.get_kernel(api.device_ctx, op.name, key);
    }
    if (fn == nullptr) continue;
    const Case base = make_cases(op, key).at(0);
    for (BadKind kind : kBadKinds) {
      // Whether the mistake applies, decided on the call alone (no memory touched).
      static unsigned char dummy[8];
      BadCall probe = well_formed(base, std::vector<void*>(base.inputs.size(), dummy),
                                  std::vector<void*>(base.outputs.size(), dummy), dummy);
      if (!make_bad(probe, kind)) continue;
      probes.push_back({bad_input_name(op, kind), [&api, fn, base, kind] { return bad_input(api, fn, base, kind); }});
    }
  }
  return probes;
}

}  // namespace

std::vector<std::string> worker_command(const std::string& exe, const WorkerArgs& a) {
  return {exe,
          kFlag,
          std::to_string(a.fd),
          std::to_string(a.first),
          a.load.file,
          std::to_string(a.load.device),
          a.load.allow_insecure ? "1" : "0",
          a.op};
}

bool is_worker_command(int argc, char** argv) { return argc == 8 && std::strcmp(argv[1], kFlag) == 0; }

int run_probe_worker(int, char** argv) {
  Pipe out(std::atoi(argv[2]));
  const int first = std::atoi(argv[3]);
  LoadSettings load;
  load.file = argv[4];
  load.device = std::atoi(argv[5]);
  load.allow_insecure = std::strcmp(argv[6], "1") == 0;
  load.memory_limit_mb = kProbeLimitMb;
  const std::string op = argv[7];
  bool loaded = false;
  try {
    std::string why;
    std::optional<Loaded> l = load_plugin(load, &why);
    if (!l || l->device == nullptr) {
      out.line("L fail " + (l ? std::string("no device") : why));
      _exit(0);
    }
    const axon_device_api& api = l->device->api();  // opens it
    out.line("L ok");
    loaded = true;
    std::vector<Probe> probes = list_probes(api, op);
    for (size_t i = static_cast<size_t>(first); i < probes.size(); ++i) {
      out.line("B " + std::to_string(i) + " " + probes[i].name);
      Outcome o;
      try {
        o = probes[i].run();
      } catch (const std::exception& e) {
        o = {'F', e.what()};
      }
      out.line("R " + std::to_string(i) + " " + o.code + " " + o.detail);
    }
    out.line("E");
  } catch (const std::exception& e) {
    out.line(std::string(loaded ? "X " : "L fail ") + e.what());
  }
  std::fflush(nullptr);
  _exit(0);  // the plugins' devices stay open, as they do in axon's apps
}

}  // namespace axon::plugin_check
