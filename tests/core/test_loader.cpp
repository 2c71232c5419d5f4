// The loader: faulty plugins are skipped with one line naming file and
// reason, an older (smaller) plugin table still loads, duplicates lose.
#include "runtime_fixture.hpp"

#include <axon/error.hpp>
#include <axon/ops.hpp>
#include <axon/runtime.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>

using namespace axon;
using Catch::Matchers::Contains;

namespace {

const SkippedPlugin* skipped_named(const Runtime& rt, const std::string& file) {
  for (const auto& s : rt.skipped_plugins())
    if (s.path.size() >= file.size() && s.path.compare(s.path.size() - file.size(), file.size(), file) == 0) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("faulty plugins are skipped with one line each and the other devices still work", "[loader]") {
  test::StderrCapture capture;
  Runtime& rt = Runtime::init(test::test_config({"faulty"}));
  std::string err = capture.text();

  struct Expect {
    const char* file;
    const char* reason;
  };
  const Expect expected[] = {
      {"libaxon-plugin-notelf.so", "cannot load: "},
      {"libaxon-plugin-noentry.so", "no entry symbol 'axon_plugin_get_api'"},
      {"libaxon-plugin-wrongabi.so", "built for ABI major 3, this axon has 2"},
      {"libaxon-plugin-noopen.so", "'open_device' field in axon_plugin_api must be set"},
      {"libaxon-plugin-initfails.so", "fake: the test device is switched off"},
  };
  for (const Expect& e : expected) {
    INFO(e.file);
    const SkippedPlugin* s = skipped_named(rt, e.file);
    REQUIRE(s != nullptr);
    CHECK_THAT(s->reason, Contains(e.reason));
    // Exactly one log line for this file, and it carries the reason.
    std::string line = "axon: W loader: skipping plugin " + s->path + ": " + s->reason;
    size_t first = err.find(line);
    int count = 0;
    std::istringstream lines(err);
    for (std::string l; std::getline(lines, l);) count += l.find(s->path) != std::string::npos;
    CHECK(first != std::string::npos);
    CHECK(count == 1);
  }
  CHECK(rt.skipped_plugins().size() == std::size(expected));
  // dlopen's own words for the text file
  CHECK_THAT(skipped_named(rt, "libaxon-plugin-notelf.so")->reason, Contains("ELF") || Contains("too short"));

  // The plugin built against a smaller table loads, and its device works.
  Device& old = rt.device("old:0");
  CHECK(old.plugin_name() == "old");
  std::vector<float> xs{-1.5f, 0.0f, 2.5f, -0.25f};
  Tensor x = Tensor::from_vector<float>(old, AXON_FLOAT32, {4}, xs);
  Tensor y(old, AXON_FLOAT32, {4});
  {
    DeviceScope scope(old);
    ops::relu(x, y);
  }
  CHECK(y.to_vector<float>() == std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f});
  // Its device table ended before memory_info: absent, so zeros, not garbage.
  axon_memory_info m = old.memory_info();
  CHECK(m.in_use == 0);
  CHECK(m.total == 0);

  // The real CPU device is unaffected.
  Device* cpu = rt.cpu_device();
  REQUIRE(cpu != nullptr);
  Tensor xc = Tensor::from_vector<float>(*cpu, AXON_FLOAT32, {4}, xs);
  Tensor yc(*cpu, AXON_FLOAT32, {4});
  {
    DeviceScope scope(*cpu);
    ops::relu(xc, yc);
  }
  CHECK(yc.to_vector<float>() == std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f});
}

TEST_CASE("a plugin built against the ABI 1.3 header loads, runs its kernels and falls back for the rest",
          "[loader][compat]") {
  Runtime& rt = Runtime::init(test::test_config({"abi13"}));
  CHECK(rt.skipped_plugins().empty());
  Device& old = rt.device("oldtoy:0");
  CHECK(old.plugin_name() == "oldtoy");
  CHECK(std::string(old.plugin_api().version) == "1.3.0");
  const std::vector<float> xs{-1.5f, 0.0f, 2.5f, -0.25f};
  Tensor x = Tensor::from_vector<float>(old, AXON_FLOAT32, {4}, xs);
  Tensor y(old, AXON_FLOAT32, {4}), z(old, AXON_FLOAT32, {4}), s(old, AXON_FLOAT32, {4});
  test::StderrCapture capture;
  {
    DeviceScope scope(old);
    ops::relu(x, y);
    ops::scale(x, z, 2.0f);
    ops::sigmoid(x, s);  // not one of its kernels: the CPU runs it
  }
  CHECK(y.to_vector<float>() == std::vector<float>{0.0f, 0.0f, 2.5f, 0.0f});
  CHECK(z.to_vector<float>() == std::vector<float>{-3.0f, 0.0f, 5.0f, -0.5f});
  CHECK(s.to_vector<float>()[1] == 0.5f);
  CHECK(capture.count_lines("axon: W placement: op Sigmoid has no kernel on /device:OLDTOY:0 (float32); running it on "
                            "/device:CPU:0 instead. Use --strict-placement to make this an error.") == 1);
  // Its tables end where 1.3's did: what later minors appended reads as absent.
  CHECK(old.api().supports == nullptr);
  CHECK(old.api().memory_info == nullptr);
  CHECK(old.plugin_api().get_extension == nullptr);
  // It came through the ABI 1 translation layer, which offers no events;
  // the host's own plugins speak ABI 2.
  CHECK(old.api().event_create == nullptr);
  for (const PluginInfo& p : rt.plugins())
    CHECK(p.abi == (p.name == "oldtoy" ? "1.3 (translated)"
                                       : std::to_string(AXON_ABI_MAJOR) + "." + std::to_string(AXON_ABI_MINOR)));
  CHECK(rt.plugins().size() >= 2);
}

TEST_CASE("ABI 2 hands out the plugin's own tables: the host reads them, never writes them", "[loader]") {
  Runtime& rt = Runtime::init(test::test_config({}));
  Device& cpu = *rt.cpu_device();
  // The device table is the plugin's (the CPU plugin's has streams and events
  // since ABI 2.0), and the frozen tensor is 112 bytes with zero reserved fields.
  CHECK(cpu.api().struct_size == sizeof(axon_device_api));
  CHECK(cpu.api().stream_create != nullptr);
  static_assert(sizeof(axon_tensor) == 112, "axon_tensor is frozen for ABI 2");
  const std::vector<float> xs{1.0f, -2.0f};
  Tensor x = Tensor::from_vector<float>(cpu, AXON_FLOAT32, {2}, xs);
  const axon_tensor view = x.c_view();
  for (int64_t r : view.reserved) CHECK(r == 0);
}

TEST_CASE("a plugin file seen in a second folder is skipped as a duplicate of the first", "[loader]") {
  test::StderrCapture capture;
  Config c = test::test_config({"placement", "dupfile"});
  Runtime& rt = Runtime::init(c);
  capture.text();
  const std::string first = test::plugin_dir("placement") + "/libaxon-plugin-fake.so";
  REQUIRE(rt.skipped_plugins().size() == 1);
  CHECK(rt.skipped_plugins()[0].reason == "duplicate of " + first);
  CHECK(rt.count("FAKE") == 1);
}

TEST_CASE("a folder named twice (or again through a link) is searched once, quietly", "[loader]") {
  test::StderrCapture capture;
  const std::string link = "/tmp/axon-test-plugin-link-" + std::to_string(::getpid());
  std::filesystem::remove(link);
  std::filesystem::create_directory_symlink(test::plugin_dir("placement"), link);
  Config c = test::test_config({"placement", "placement"});
  c.plugin_dirs.push_back(link);
  Runtime& rt = Runtime::init(c);
  std::string err = capture.text();
  std::filesystem::remove(link);
  CHECK(rt.skipped_plugins().empty());
  CHECK(err.find("duplicate") == std::string::npos);
  CHECK(rt.count("FAKE") == 1);
}

TEST_CASE("a second plugin with a name already loaded is skipped as a duplicate", "[loader]") {
  test::StderrCapture capture;
  Runtime& rt = Runtime::init(test::test_config({"placement", "dupname"}));
  capture.text();
  REQUIRE(rt.skipped_plugins().size() == 1);
  CHECK(rt.skipped_plugins()[0].path == test::plugin_dir("dupname") + "/libaxon-plugin-fakeagain.so");
  CHECK(rt.skipped_plugins()[0].reason ==
        "duplicate of " + test::plugin_dir("placement") + "/libaxon-plugin-fake.so (both are plugin 'fake')");
  CHECK(rt.count("FAKE") == 1);
}

TEST_CASE("plugins report their load time and listing devices opens none", "[loader]") {
  Runtime& rt = Runtime::init(test::test_config({"placement"}));
  REQUIRE(!rt.plugins().empty());
  for (const PluginInfo& p : rt.plugins()) {
    INFO(p.path);
    CHECK(p.load_ms > 0);
    CHECK(p.load_ms < 5000);
  }
  for (Device* d : rt.devices()) CHECK_FALSE(d->is_open());
  Device& fake = rt.device("fake:0");
  Tensor t(fake, AXON_FLOAT32, {2});
  CHECK(fake.is_open());
}

TEST_CASE("a second init is refused: device settings are read once", "[loader]") {
  Runtime::init(test::test_config());
  CHECK_THROWS_AS(Runtime::init(test::test_config()), UsageError);
  CHECK_THROWS_WITH(Runtime::init(test::test_config()), Contains("read once at start"));
}

TEST_CASE("plugins get the configuration and log through the host API", "[loader]") {
  Config c = test::test_config({"placement"});
  c.threads = 3;
  c.gpu_memory_limit_mb = 64;
  c.log_level = "info";
  Runtime& rt = Runtime::init(c);
  test::StderrCapture capture;
  Tensor t(rt.device("fake:0"), AXON_FLOAT32, {2});  // opens the device
  // The thread total reaches the plugin through get_config, to divide among
  // its devices; the per-device override stays 0 (the plugin decides).
  CHECK(rt.device("fake:0").collectives() == nullptr);  // it offers none
  CHECK(capture.count_lines("axon: I fake: opening device 0: logical index 0, memory mode 2, limit 67108864, "
                            "threads 0, get_config(threads)=3") == 1);
}
