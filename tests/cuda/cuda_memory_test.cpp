// GPU memory modes through the C ABI: reserve takes most of the memory at
// open, growth takes only what is asked for, limit never holds more than its
// cap and an allocation above it fails with AXON_OUT_OF_MEMORY and a message
// that names the numbers. One mode per process (a device opens once):
//
//   cuda_memory_test <libaxon-plugin-cuda.so> reserve|growth|limit
//
// Exit: 0 pass, 1 fail (also: a GPU the plugin cannot use), 77 the driver
// reports no CUDA device. Plain C++ (no Catch2).
#include "device_presence.hpp"
#include "plugin_harness.hpp"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace axon::test;

namespace {

constexpr uint64_t MiB = 1ull << 20, GiB = 1ull << 30;
int failures = 0;

void expect(bool ok, const std::string& what) {
  std::printf("%s  %s\n", ok ? "PASS" : "FAIL", what.c_str());
  if (!ok) ++failures;
}

struct Opened {
  axon_device_api api{};
  Opened(const LoadedPlugin& p, axon_memory_mode mode, uint64_t limit) {
    axon_device_config cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.logical_index = 0;
    cfg.memory_mode = mode;
    cfg.memory_limit_bytes = limit;
    api = axon::client::open_device(p.api, 0, cfg);
  }
  ~Opened() { api.close(api.device_ctx); }
  axon_memory_info info() {
    axon_memory_info m{};
    m.struct_size = sizeof m;
    axon_error err{};
    check(api.memory_info(api.device_ctx, &m, &err), err, "memory_info");
    return m;
  }
  void* alloc(uint64_t bytes, axon_status* status = nullptr, std::string* message = nullptr) {
    void* p = nullptr;
    axon_error err{};
    axon_status s = api.allocate(api.device_ctx, bytes, &p, &err);
    if (status) *status = s;
    if (message) *message = err.message;
    if (!status) check(s, err, "allocate " + std::to_string(bytes));
    return s == AXON_OK ? p : nullptr;
  }
  void free(void* p) { api.deallocate(api.device_ctx, p); }
};

void print(const char* mode, const axon_memory_info& m) {
  std::printf("MEMORY %s: in_use %.1f MiB, peak %.1f MiB, reserved %.1f MiB, limit %.1f MiB, total %.1f MiB, "
              "largest free block %.1f MiB\n",
              mode, m.in_use / double(MiB), m.peak_in_use / double(MiB), m.reserved / double(MiB), m.limit / double(MiB),
              m.total / double(MiB), m.largest_free_block / double(MiB));
}

// Fill + Sum on memory from the allocator: the memory is usable.
void use_memory(Opened& d, const char* mode) {
  const int64_t n = 1 << 20;
  axon_tensor y{}, s{};
  y.dtype = s.dtype = AXON_FLOAT32;
  y.rank = 1;
  y.dims[0] = n;
  s.rank = 1;
  s.dims[0] = 1;
  y.data = d.alloc(n * 4);
  s.data = d.alloc(4);
  axon_fill_attrs fa{};
  fa.struct_size = sizeof fa;
  fa.value = 1.f;
  axon_kernel_call c{};
  c.struct_size = sizeof c;
  c.op = "Fill";
  c.num_outputs = 1;
  c.outputs = &y;
  c.attrs = &fa;
  axon_error err{};
  check(d.api.get_kernel(d.api.device_ctx, "Fill", AXON_FLOAT32)(d.api.device_ctx, &c, &err), err, "Fill");
  axon_kernel_call sc{};
  sc.struct_size = sizeof sc;
  sc.op = "Sum";
  sc.num_inputs = 1;
  sc.inputs = &y;
  sc.num_outputs = 1;
  sc.outputs = &s;
  check(d.api.get_kernel(d.api.device_ctx, "Sum", AXON_FLOAT32)(d.api.device_ctx, &sc, &err), err, "Sum");
  float total = 0;
  check(d.api.copy_device_to_host(d.api.device_ctx, &total, s.data, 4, &err), err, "d2h");
  expect(total == float(n), std::string(mode) + ": Fill+Sum over 1M floats of allocator memory gives " + std::to_string(total));
  d.free(y.data);
  d.free(s.data);
}

bool has_all(const std::string& msg, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (msg.find(w) == std::string::npos) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <libaxon-plugin-cuda.so> reserve|growth|limit\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[2];
  if (mode != "reserve" && mode != "growth" && mode != "limit") {
    std::fprintf(stderr, "%s: unknown mode '%s' (reserve, growth or limit)\n", argv[0], argv[2]);
    return 2;
  }
  try {
    LoadedPlugin cuda(argv[1]);
    if (auto code = exit_without_device(cuda, "CUDA device")) return *code;
    axon_device_props props{};
    props.struct_size = sizeof props;
    axon_error perr{};
    check(cuda.api.get_device_props(cuda.api.plugin_ctx, 0, &props, &perr), perr, "get_device_props");
    const uint64_t free_at_start = props.memory_free;

    if (mode == "reserve") {
      Opened d(cuda, AXON_MEMORY_RESERVE, 0);
      auto m = d.info();
      print("reserve (after open)", m);
      expect(m.reserved >= free_at_start / 2, "reserve: most free memory is reserved at open");
      expect(m.in_use < 64 * MiB, "reserve: little is in use after open");
      void* p = d.alloc(GiB);
      auto m2 = d.info();
      expect(m2.reserved == m.reserved, "reserve: a 1 GiB allocation comes from the reservation");
      expect(m2.in_use >= m.in_use + GiB && m2.peak_in_use >= m2.in_use, "reserve: in_use and peak count it");
      d.free(p);
      expect(d.info().in_use == m.in_use, "reserve: freeing returns it");
      axon_status st;
      std::string msg;
      d.alloc(m.reserved + GiB, &st, &msg);
      std::printf("       message: %s\n", msg.c_str());
      expect(st == AXON_OUT_OF_MEMORY, "reserve: more than the reservation is AXON_OUT_OF_MEMORY");
      expect(has_all(msg, {"requested", "GPU:0", "in use", "reserved", "largest free block"}), "reserve: message has the numbers");
      use_memory(d, "reserve");
      print("reserve (end)", d.info());
    } else if (mode == "growth") {
      Opened d(cuda, AXON_MEMORY_GROWTH, 0);
      auto m = d.info();
      print("growth (after open)", m);
      expect(m.reserved <= 256 * MiB, "growth: reserves far less than reserve mode at open");
      void* p = d.alloc(256 * MiB);
      auto m2 = d.info();
      expect(m2.reserved >= m.reserved + 256 * MiB && m2.reserved <= m.reserved + 260 * MiB, "growth: grows by what is asked");
      d.free(p);
      void* q = d.alloc(200 * MiB);
      expect(d.info().reserved == m2.reserved, "growth: a freed block is reused, not allocated again");
      d.free(q);
      use_memory(d, "growth");
      print("growth (end)", d.info());
    } else {
      const uint64_t limit = GiB;
      Opened d(cuda, AXON_MEMORY_LIMIT, limit);
      auto m = d.info();
      print("limit (after open)", m);
      expect(m.limit == limit, "limit: memory_info reports the limit");
      void* a = d.alloc(600 * MiB);
      axon_status st;
      std::string msg;
      d.alloc(600 * MiB, &st, &msg);
      std::printf("       message: %s\n", msg.c_str());
      expect(st == AXON_OUT_OF_MEMORY, "limit: going over 1 GiB is AXON_OUT_OF_MEMORY");
      expect(has_all(msg, {"requested", "GPU:0", "limit 1.00 GiB", "in use", "reserved", "largest free block"}),
             "limit: message names requested, device, limit, in use, reserved, largest free block");
      expect(d.info().reserved <= limit, "limit: reserved never exceeds the limit");
      d.free(a);
      void* b = d.alloc(900 * MiB);
      expect(b != nullptr && d.info().reserved <= limit, "limit: after freeing, 900 MiB fits under the limit");
      d.free(b);
      use_memory(d, "limit");
      print("limit (end)", d.info());
    }
    std::printf("SUMMARY: %s: memory mode %s, %d failure(s)\n", failures ? "FAIL" : "PASS", mode.c_str(), failures);
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
