// Device names in every accepted spelling, and the ones that are refused.
#include <axon/device.hpp>
#include <axon/error.hpp>

#include <catch2/catch.hpp>

using axon::parse_device_spec;

TEST_CASE("device specs parse in every accepted spelling", "[spec]") {
  struct Case {
    const char* text;
    const char* type;
    int index;
  };
  const Case cases[] = {
      {"/device:GPU:1", "GPU", 1}, {"/device:gpu:1", "GPU", 1}, {"device:CPU:0", "CPU", 0},
      {"gpu:1", "GPU", 1},         {"cuda:1", "GPU", 1},        {"CUDA:3", "GPU", 3},
      {"GPU", "GPU", 0},           {"cpu", "CPU", 0},           {"/cpu:2", "CPU", 2},
      {" ref:0 ", "REF", 0},       {"my_npu:12", "MY_NPU", 12},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    axon::DeviceSpec s = parse_device_spec(c.text);
    CHECK(s.type == c.type);
    CHECK(s.index == c.index);
  }
  CHECK(parse_device_spec("cuda:1").canonical() == "/device:GPU:1");
}

TEST_CASE("malformed device specs are usage errors naming the text", "[spec]") {
  for (const char* bad : {"", "/", ":0", "gpu:", "gpu:-1", "gpu:x", "gpu:1:2", "g-pu:0", "/device:", "gpu:99999999"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_device_spec(bad), axon::UsageError);
  }
  CHECK_THROWS_WITH(parse_device_spec("gpu:x"), Catch::Matchers::Contains("bad device name 'gpu:x'"));
}
