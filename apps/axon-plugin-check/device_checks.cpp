#include "device_checks.hpp"

#include "device_calls.hpp"

#include <axon/op_table.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace axon::plugin_check {

void check_list_ops(const axon_device_api& api, Report& report) {
  const char* name = "list_ops names the ops get_kernel has";
  std::set<std::string> listed, unknown;
  if (const char* const* ops = api.list_ops(api.device_ctx))
    for (; *ops != nullptr; ++ops) {
      listed.insert(*ops);
      if (find_op(*ops) == nullptr) unknown.insert(*ops);
    }
  std::string problems;
  int with_kernel = 0;
  for (const OpSchema& op : kOpTable) {
    bool has = false;
    for (int t = 0; t < kDtypeCount; ++t)
      has = has || (kernel_dtype_allowed(op, static_cast<axon_dtype>(t)) &&
                    api.get_kernel(api.device_ctx, op.name, static_cast<axon_dtype>(t)) != nullptr);
    with_kernel += has;
    if (has && !listed.count(op.name)) problems += std::string(problems.empty() ? "" : "; ") + op.name + " has a kernel but is not listed";
    if (!has && listed.count(op.name)) problems += std::string(problems.empty() ? "" : "; ") + op.name + " is listed but has no kernel";
  }
  if (!problems.empty()) return report.fail(name, problems);
  std::string extra;
  for (const std::string& u : unknown) extra += (extra.empty() ? "" : ", ") + u;
  report.pass(name, std::to_string(with_kernel) + " ops" +
                        (extra.empty() ? "" : "; also listed, not in the op table (never used by axon): " + extra));
}

namespace {

void check_alignment(const axon_device_api& api, Report& report) {
  const std::string name = "allocator: " + std::to_string(kAlignment) + "-byte alignment";
  const size_t sizes[] = {1, 3, 64, 100, 1000, 4096, 65537, size_t{1} << 20};
  DeviceMemory mem(api);
  try {
    for (size_t n : sizes) {
      const auto at = reinterpret_cast<uintptr_t>(mem.allocate(n));
      if (at % kAlignment != 0) {
        size_t a = 1;
        while (at % (a * 2) == 0) a *= 2;
        return report.fail(name, "allocate(" + std::to_string(n) + ") gave an address aligned to " + std::to_string(a) +
                                     " bytes only");
      }
    }
  } catch (const CallFailed& e) {
    return report.fail(name, e.what());
  }
  report.pass(name, std::to_string(std::size(sizes)) + " allocations of 1 to 1048576 bytes");
}

axon_memory_info info_of(const axon_device_api& api) {
  axon_memory_info m{};
  m.struct_size = sizeof m;
  axon_error err{};
  err.struct_size = sizeof err;
  const axon_status s = api.memory_info(api.device_ctx, &m, &err);
  if (s != AXON_OK) throw CallFailed("memory_info returned " + status_text(s, err));
  return m;
}

// in_use grows by at least what was asked for and goes back when it is freed;
// peak_in_use and reserved are at least in_use.
void check_accounting(const axon_device_api& api, Report& report) {
  const char* name = "allocator: memory_info accounting";
  if (api.memory_info == nullptr) return report.skip(name, "the device has no memory_info (it is optional)");
  try {
    const uint64_t asked = 1000 + 3 * 4096 + 5;
    const axon_memory_info before = info_of(api);
    axon_memory_info during{};
    during.struct_size = sizeof during;
    {
      DeviceMemory mem(api);
      mem.allocate(1000);
      mem.allocate(3 * 4096 + 5);
      during = info_of(api);
    }
    synchronize(api);  // a device that frees in stream order has done so now
    const axon_memory_info after = info_of(api);
    auto n = [](uint64_t v) { return std::to_string(v); };
    if (during.in_use < before.in_use + asked)
      return report.fail(name, "in_use went from " + n(before.in_use) + " to " + n(during.in_use) + " bytes after " +
                                   n(asked) + " bytes were allocated");
    if (during.peak_in_use < during.in_use)
      return report.fail(name, "peak_in_use " + n(during.peak_in_use) + " is below in_use " + n(during.in_use));
    if (during.reserved < during.in_use)
      return report.fail(name, "reserved " + n(during.reserved) + " is below in_use " + n(during.in_use));
    if (after.in_use != before.in_use)
      return report.fail(name, "in_use was " + n(before.in_use) + " bytes, " + n(during.in_use) + " with " + n(asked) +
                                   " more allocated, and " + n(after.in_use) + " once they were freed (want " +
                                   n(before.in_use) + ")");
    report.pass(name, "in_use " + n(before.in_use) + " -> " + n(during.in_use) + " -> " + n(after.in_use) + ", peak " +
                          n(during.peak_in_use));
  } catch (const CallFailed& e) {
    report.fail(name, e.what());
  }
}

}  // namespace

void check_allocator(const axon_device_api& api, Report& report) {
  check_alignment(api, report);
  check_accounting(api, report);
}

void check_copies(const axon_device_api& api, Report& report) {
  const size_t n = 65537 + 3;  // odd: no copy may assume whole words
  std::vector<unsigned char> data(n), back(n);
  std::mt19937 rng(7);
  for (unsigned char& b : data) b = static_cast<unsigned char>(rng());
  DeviceMemory mem(api);
  unsigned char* a = nullptr;
  unsigned char* b = nullptr;
  auto differs = [&](const unsigned char* want, size_t len) -> std::string {
    for (size_t i = 0; i < len; ++i)
      if (back[i] != want[i])
        return "byte " + std::to_string(i) + " of " + std::to_string(len) + " is " + std::to_string(back[i]) +
               ", want " + std::to_string(want[i]);
    return "";
  };
  const char* round_trip = "copy: host->device->host";
  try {
    a = static_cast<unsigned char*>(mem.allocate(n));
    b = static_cast<unsigned char*>(mem.allocate(n));
    mem.upload(a, data.data(), n);
    mem.download(back.data(), a, n);
    if (std::string d = differs(data.data(), n); !d.empty()) return report.fail(round_trip, d);
    report.pass(round_trip, std::to_string(n) + " bytes");
  } catch (const CallFailed& e) {
    return report.fail(round_trip, e.what());
  }
  const char* d2d = "copy: device->device";
  axon_error err{};
  err.struct_size = sizeof err;
  try {
    const axon_status s = api.copy_device_to_device(api.device_ctx, b, a, n, &err);
    if (s != AXON_OK) return report.fail(d2d, "copy_device_to_device returned " + status_text(s, err));
    mem.download(back.data(), b, n);
    if (std::string d = differs(data.data(), n); !d.empty()) return report.fail(d2d, d);
    report.pass(d2d, std::to_string(n) + " bytes");
  } catch (const CallFailed& e) {
    return report.fail(d2d, e.what());
  }
  // Inside allocations, as axon's views are: 256 bytes into one, 512 into the other.
  const char* offsets = "copy: device->device between offsets into allocations";
  try {
    const size_t len = n - 1000;
    const axon_status s = api.copy_device_to_device(api.device_ctx, b + 512, a + 256, len, &err);
    if (s != AXON_OK) return report.fail(offsets, "copy_device_to_device returned " + status_text(s, err));
    mem.download(back.data(), b + 512, len);
    if (std::string d = differs(data.data() + 256, len); !d.empty()) return report.fail(offsets, d);
    report.pass(offsets, std::to_string(len) + " bytes");
  } catch (const CallFailed& e) {
    report.fail(offsets, e.what());
  }
}

namespace {

// An event, destroyed on every path.
class Event {
 public:
  explicit Event(const axon_device_api& api) : api_(api) {
    axon_error err = client::new_error();
    client::check(api_.event_create(api_.device_ctx, &e_, &err), err, "event_create");
  }
  ~Event() { api_.event_destroy(api_.device_ctx, e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(axon_stream s = nullptr) { on_stream(api_.event_record, s, "event_record"); }
  void wait(axon_stream s = nullptr) { on_stream(api_.event_wait, s, "event_wait"); }
  void synchronize() { call(api_.event_synchronize, "event_synchronize"); }
  bool done() {
    int32_t d = -1;
    axon_error err = client::new_error();
    client::check(api_.event_query(api_.device_ctx, e_, &d, &err), err, "event_query");
    if (d != 0 && d != 1) throw CallFailed("event_query answered " + std::to_string(d) + ", not 0 or 1");
    return d == 1;
  }

 private:
  void call(axon_status (*f)(void*, axon_event, axon_error*), const char* what) {
    axon_error err = client::new_error();
    client::check(f(api_.device_ctx, e_, &err), err, what);
  }
  void on_stream(axon_status (*f)(void*, axon_event, axon_stream, axon_error*), axon_stream s, const char* what) {
    axon_error err = client::new_error();
    client::check(f(api_.device_ctx, e_, s, &err), err, what);
  }
  const axon_device_api& api_;
  axon_event e_ = nullptr;
};

// A stream of the device, destroyed on every path.
class Stream {
 public:
  explicit Stream(const axon_device_api& api) : api_(api) {
    axon_error err = client::new_error();
    client::check(api_.stream_create(api_.device_ctx, &s_, &err), err, "stream_create");
    if (s_ == nullptr) throw CallFailed("stream_create returned AXON_OK and a NULL stream");
  }
  ~Stream() { api_.stream_destroy(api_.device_ctx, s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  axon_stream get() const { return s_; }

 private:
  const axon_device_api& api_;
  axon_stream s_ = nullptr;
};

}  // namespace

void check_events(const axon_device_api& api, Report& report) {
  const char* table = "events: all or none";
  const char* points = "events: a point is reached after the work before it";
  const char* async = "copies: asynchronous, completed by an event";
  const char* streams = "streams: an event orders work on two streams";
  const char* kernel = "streams: a kernel call on a stream";
  if (api.event_create == nullptr) {
    const std::string none = "no events: axon waits for the device's work with synchronize()";
    for (const char* n : {table, points, async, streams, kernel}) report.skip(n, none);
    return;
  }
  std::string missing;
  const std::pair<const char*, bool> fields[] = {
      {"stream_create", api.stream_create != nullptr},
      {"stream_destroy", api.stream_destroy != nullptr},
      {"event_destroy", api.event_destroy != nullptr},
      {"event_record", api.event_record != nullptr},
      {"event_wait", api.event_wait != nullptr},
      {"event_query", api.event_query != nullptr},
      {"event_synchronize", api.event_synchronize != nullptr},
      {"copy_host_to_device_async", api.copy_host_to_device_async != nullptr},
      {"copy_device_to_host_async", api.copy_device_to_host_async != nullptr},
      {"copy_device_to_device_async", api.copy_device_to_device_async != nullptr}};
  for (const auto& [field, set] : fields)
    if (!set) missing += (missing.empty() ? "" : ", ") + std::string(field);
  if (!missing.empty()) return report.fail(table, "event_create is set, " + missing + " not");
  report.pass(table);

  // Work, a point after it, a wait for the point, more work: the point is
  // reached (query, then synchronize) and the later work sees the earlier.
  const size_t n = size_t{1} << 22;  // 4 MiB: long enough to be queued on a GPU
  std::vector<unsigned char> data(n), back(n);
  std::mt19937 rng(11);
  for (unsigned char& b : data) b = static_cast<unsigned char>(rng());
  try {
    DeviceMemory mem(api);
    void* a = mem.allocate(n);
    void* b = mem.allocate(n);
    Event fresh(api);
    if (!fresh.done()) return report.fail(points, "event_query of an event never recorded answered 0");
    mem.upload(a, data.data(), n);
    Event after_upload(api), after_copy(api);
    after_upload.record();
    after_upload.wait();
    axon_error err = client::new_error();
    client::check(api.copy_device_to_device(api.device_ctx, b, a, n, &err), err, "copy_device_to_device");
    after_copy.record();
    bool reached = false;
    for (int i = 0; i < 100000 && !reached; ++i) reached = after_copy.done();
    after_copy.synchronize();
    if (!after_copy.done()) return report.fail(points, "event_query answered 0 after event_synchronize returned");
    mem.download(back.data(), b, n);
    if (back != data) return report.fail(points, "the copy after the point differs from the data before it");
    report.pass(points, reached ? "queried done, then synchronized" : "synchronized (the query kept answering 0)");
  } catch (const CallFailed& e) {
    return report.fail(points, e.what());
  }

  try {
    DeviceMemory mem(api);
    void* a = mem.allocate(n);
    std::fill(back.begin(), back.end(), 0);
    axon_error err = client::new_error();
    client::check(api.copy_host_to_device_async(api.device_ctx, a, data.data(), n, nullptr, &err), err,
                  "copy_host_to_device_async");
    client::check(api.copy_device_to_host_async(api.device_ctx, back.data(), a, n, nullptr, &err), err,
                  "copy_device_to_host_async");
    Event done(api);
    done.record();
    done.synchronize();
    if (back != data) return report.fail(async, "the data back through host memory differs once the event is reached");
    report.pass(async, std::to_string(n) + " bytes there and back");
  } catch (const CallFailed& e) {
    report.fail(async, e.what());
  }

  // Upload on a stream of its own, a point after it that the device's stream
  // waits for, a copy there, and back on a third stream after a second
  // point: what arrives is what was uploaded.
  try {
    DeviceMemory mem(api);
    void* a = mem.allocate(n);
    void* b = mem.allocate(n);
    std::fill(back.begin(), back.end(), 0);
    Stream up(api), down(api);
    Event uploaded(api), copied(api), done(api);
    axon_error err = client::new_error();
    client::check(api.copy_host_to_device_async(api.device_ctx, a, data.data(), n, up.get(), &err), err,
                  "copy_host_to_device_async on a stream");
    uploaded.record(up.get());
    uploaded.wait();
    client::check(api.copy_device_to_device_async(api.device_ctx, b, a, n, nullptr, &err), err,
                  "copy_device_to_device_async");
    copied.record();
    copied.wait(down.get());
    client::check(api.copy_device_to_host_async(api.device_ctx, back.data(), b, n, down.get(), &err), err,
                  "copy_device_to_host_async on a stream");
    done.record(down.get());
    done.synchronize();
    if (back != data)
      return report.fail(streams, "the data through three streams differs once the last point is reached");
    report.pass(streams, std::to_string(n) + " bytes, three streams, two points");
  } catch (const CallFailed& e) {
    report.fail(streams, e.what());
  }

  // Upload, Relu and download all on one stream of the device's, then a
  // point after them: y is relu(x).
  const axon_kernel_fn relu = api.get_kernel(api.device_ctx, "Relu", AXON_FLOAT32);
  if (relu == nullptr) return report.skip(kernel, "no float32 Relu kernel to queue");
  try {
    const int64_t count = 1 << 20;
    std::vector<float> x(static_cast<size_t>(count)), y(x.size(), -1.0f);
    for (float& v : x) v = static_cast<float>(static_cast<int32_t>(rng() % 2001) - 1000) / 100.0f;
    DeviceMemory mem(api);
    const size_t bytes = x.size() * sizeof(float);
    void* dx = mem.allocate(bytes);
    void* dy = mem.allocate(bytes);
    Stream s(api);
    Event done(api);
    axon_error err = client::new_error();
    client::check(api.copy_host_to_device_async(api.device_ctx, dx, x.data(), bytes, s.get(), &err), err,
                  "copy_host_to_device_async on a stream");
    std::vector<axon_tensor> in(1), out(1);
    in[0] = {dx, AXON_FLOAT32, 1, {count}, {}};
    out[0] = {dy, AXON_FLOAT32, 1, {count}, {}};
    const axon_kernel_call call = client::kernel_call("Relu", in, out, nullptr, s.get());
    client::check(relu(api.device_ctx, &call, &err), err, "Relu on a stream");
    client::check(api.copy_device_to_host_async(api.device_ctx, y.data(), dy, bytes, s.get(), &err), err,
                  "copy_device_to_host_async on a stream");
    done.record(s.get());
    done.synchronize();
    for (size_t i = 0; i < x.size(); ++i)
      if (y[i] != std::max(x[i], 0.0f))
        return report.fail(kernel, "y[" + std::to_string(i) + "] is " + std::to_string(y[i]) + ", relu(x) " +
                                       std::to_string(std::max(x[i], 0.0f)));
    report.pass(kernel, "Relu of " + std::to_string(count) + " floats between two copies on one stream");
  } catch (const CallFailed& e) {
    report.fail(kernel, e.what());
  }
}

}  // namespace axon::plugin_check
