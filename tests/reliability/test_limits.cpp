// Limits and strict parsing: every value beyond a stated limit is a usage
// error naming the limit and the value, before anything is allocated for it.
#include "reliability_util.hpp"

#include <axon/cli.hpp>
#include <axon/config.hpp>
#include <axon/data/batches.hpp>
#include <axon/data/mnist.hpp>
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/parse.hpp>
#include <axon/tensor.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <limits>

using namespace axon;
using axon::test::usage_error;

namespace po = boost::program_options;

namespace {

// The device flags parsed as an app does.
po::variables_map flags(std::vector<std::string> args) {
  po::options_description d;
  cli::add_device_options(d);
  std::vector<const char*> argv{"test"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(), d), vm);
  return vm;
}

// Sets one variable for the test's duration.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) { ::setenv(name.c_str(), value, 1); }
  ~ScopedEnv() { ::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("parse::integer takes whole decimal integers within the range only", "[limits]") {
  CHECK(parse::integer("X", "0", 0, 10) == 0);
  CHECK(parse::integer("X", "10", 0, 10) == 10);
  CHECK(parse::integer("X", "-5", -10, 10) == -5);
  for (const char* bad : {"", " 1", "1 ", "+1", "1e3", "0x10", "11", "-1", "1.0", "one", "99999999999999999999"})
    CHECK_THAT(usage_error([&] { parse::integer("AXON_X", bad, 0, 10); }),
               Catch::Contains("AXON_X='") && Catch::Contains("is not an integer from 0 to 10"));
}

TEST_CASE("parse::boolean takes the documented spellings and nothing else", "[limits]") {
  for (const char* t : {"1", "true", "TRUE", "yes", "On"}) CHECK(parse::boolean("X", t));
  for (const char* f : {"0", "false", "No", "off", "OFF"}) CHECK_FALSE(parse::boolean("X", f));
  for (const char* bad : {"", "maybe", "2", "truee", " 1", "y"})
    CHECK_THAT(usage_error([&] { parse::boolean("AXON_FUSED_OPS", bad); }),
               Catch::Contains("AXON_FUSED_OPS='") && Catch::Contains("is not a boolean"));
}

TEST_CASE("a hostile value is echoed on one short line", "[limits]") {
  const std::string huge(10000, '7');
  const std::string msg = usage_error([&] { parse::integer("AXON_NUM_THREADS", huge + "\n\x1b[2J", 0, 5); });
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.find('\x1b') == std::string::npos);
  CHECK(msg.size() < 200);
}

TEST_CASE("a UsageError is one printable line whatever its message quotes", "[limits]") {
  // Every refusal is the app's one error line, and an echo site that forgot
  // parse::printable must not break it (fuzz_keras_file found a Keras
  // layer's data_format quoted with its line break).
  CHECK(std::string(UsageError("a\nb\r\x1b[2Jc").what()) == "a?b??[2Jc");
  CHECK(std::string(UsageError(std::string("x\xe2\x80\xa8y")).what()) == "x?y");
  CHECK(std::string(UsageError("plain: 'donn\xc3\xa9" "es' (3, 4)").what()) == "plain: 'donn\xc3\xa9" "es' (3, 4)");
  const std::string layer = R"({"class_name": "AveragePooling2D", "config": {"name": "p", "pool_size": [2, 2],
                                "data_format": "channels\nfirst"}})";
  const std::string msg = usage_error([&] { nn::keras_layer_output_shape(layer, {{8, 8, 3}}, "m.json"); });
  CHECK(msg.find('\n') == std::string::npos);
  CHECK_THAT(msg, Catch::Contains("data_format is channels?first; axon's images are channels_last"));
}

TEST_CASE("parse::printable keeps printable UTF-8 and shows everything else as '?'", "[limits]") {
  const std::string e_acute = "\xc3\xa9", nichi = "\xe6\x97\xa5";  // é, 日
  CHECK(parse::printable("donn" + e_acute + "es/" + nichi + ".axw") == "donn" + e_acute + "es/" + nichi + ".axw");
  CHECK(parse::printable("a\nb\rc\td\x7f!") == "a?b?c?d?!");
  CHECK(parse::printable("\x1b[31mred") == "?[31mred");        // ESC: a terminal's escape sequence
  CHECK(parse::printable("x\xc2\x9b[31m") == "x?[31m");        // C1 CSI, UTF-8 encoded
  CHECK(parse::printable("x\x9b[31m") == "x?[31m");            // a lone byte that is not UTF-8
  CHECK(parse::printable("a\xe2\x80\xa8!") == "a?!");          // U+2028 line separator
  CHECK(parse::printable("a\xe2\x80\xae!dcba") == "a?!dcba");  // U+202E right-to-left override
  CHECK(parse::printable("\xc0\xaf\xed\xa0\x80") == "?????");  // overlong '/', a surrogate
  CHECK(parse::printable("\xf4\x90\x80\x80") == "????");       // beyond U+10FFFF
  CHECK(parse::printable(nichi.substr(0, 2)) == "??");         // cut short
  // The limit counts characters and never cuts one in two.
  CHECK(parse::printable(e_acute + e_acute + e_acute, 2) == e_acute + e_acute + "...");
  CHECK(parse::printable(std::string(64, 'x')) == std::string(64, 'x'));
  CHECK(parse::printable(std::string(65, 'x')) == std::string(64, 'x') + "...");
  CHECK(parse::printable_path(std::string(300, 'p')) == std::string(300, 'p'));  // a file name is shown whole
  CHECK(parse::printable_path(std::string(5000, 'p')).size() == parse::kMaxPathEcho + 3);
  CHECK(parse::one_line(std::string(10000, 'm') + "\n") == std::string(10000, 'm') + "?");
}

TEST_CASE("thread and device limits, from flags and variables", "[limits]") {
  CHECK_THAT(usage_error([&] { cli::make_config(flags({"--threads", "1025"})); }),
             Catch::Contains("--threads must be from 0 (all cores) to 1024, got 1025"));
  CHECK_THAT(usage_error([&] { cli::make_config(flags({"--cpu-devices", "2147483647"})); }),
             Catch::Contains("--cpu-devices must be from 1 to 256, got 2147483647"));
  CHECK_THAT(usage_error([&] { cli::make_config(flags({"--gpu-memory-limit", "9223372036854775807"})); }),
             Catch::Contains("--gpu-memory-limit"));
  {
    ScopedEnv e("AXON_NUM_THREADS", "1000000");
    CHECK_THAT(usage_error([&] { Config::from_environment(); }),
               Catch::Contains("AXON_NUM_THREADS='1000000' is not an integer from 0 to 1024"));
  }
  {
    ScopedEnv e("AXON_CPU_DEVICE_COUNT", "257");
    CHECK_THAT(usage_error([&] { Config::from_environment(); }), Catch::Contains("from 1 to 256"));
  }
  CHECK(cli::make_config(flags({"--threads", "1024", "--cpu-devices", "256"})).threads == 1024);
}

TEST_CASE("threads are a total: fewer threads than logical CPU devices is refused", "[limits]") {
  CHECK_THAT(usage_error([&] { cli::make_config(flags({"--cpu-devices", "4", "--threads", "1"})); }),
             Catch::Contains("1 CPU thread in all") && Catch::Contains("cannot run 4 logical CPU devices") &&
                 Catch::Contains("--threads 4"));
  CHECK(cli::make_config(flags({"--cpu-devices", "4", "--threads", "4"})).threads == 4);
  CHECK(cli::make_config(flags({"--cpu-devices", "4"})).threads == 0);  // 0: all cores, at least one each
  // The variables meet the same check, once the flags are applied.
  ScopedEnv d("AXON_CPU_DEVICE_COUNT", "3");
  ScopedEnv t("AXON_NUM_THREADS", "2");
  CHECK_THAT(usage_error([&] { cli::make_config(flags({})); }), Catch::Contains("cannot run 3 logical CPU devices"));
  CHECK(cli::make_config(flags({"--threads", "3"})).threads == 3);
}

TEST_CASE("AXON_FUSED_OPS is a boolean: false/off/no turn fusion off, a typo is refused", "[limits]") {
  for (const char* off : {"0", "false", "off", "no", "FALSE"}) {
    ScopedEnv e("AXON_FUSED_OPS", off);
    CHECK_FALSE(Config::from_environment().fused_ops);
  }
  {
    ScopedEnv e("AXON_FUSED_OPS", "on");
    CHECK(Config::from_environment().fused_ops);
  }
  ScopedEnv e("AXON_FUSED_OPS", "maybe");
  CHECK_THAT(usage_error([&] { Config::from_environment(); }), Catch::Contains("AXON_FUSED_OPS='maybe'"));
}

TEST_CASE("element counts that wrap 64 bits are refused, not wrapped", "[limits]") {
  const int64_t big = int64_t{1} << 31;
  CHECK_THAT(usage_error([&] { numel({4, big, big}); }), Catch::Contains("more elements than a 64-bit count"));
  CHECK_THAT(usage_error([&] { numel({std::numeric_limits<int64_t>::max(), 2}); }), Catch::Contains("64-bit"));
  CHECK(numel({big, big}) == int64_t{1} << 62);
  CHECK(numel({}) == 1);
}

TEST_CASE("a batch far above the set costs no more than the set", "[limits]") {
  data::ImageSet set;
  set.count = 10;
  set.rows = set.cols = 28;
  set.images.assign(10 * 28 * 28, 1);
  set.labels.assign(10, 3);
  for (int64_t batch : {int64_t{100000000}, std::numeric_limits<int64_t>::max()}) {
    data::BatchPipeline p(set, batch, true, 1, false);
    CHECK(p.steps() == 1);
    p.begin_epoch(0);
    CHECK(p.next().size == 10);
  }
}
