// TensorBoard event files: records of hand-encoded Event protocol buffers
// (the layout is in axon/train/tensorboard.hpp).
#include <axon/error.hpp>
#include <axon/train/atomic_file.hpp>
#include <axon/train/tensorboard.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace axon::train {
namespace {

static_assert(std::endian::native == std::endian::little, "records are little-endian");

constexpr std::array<uint32_t, 256> crc32c_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;  // reflected Castagnoli
    t[i] = c;
  }
  return t;
}

uint32_t masked_crc(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

template <class T>
void put_le(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// Wire types: 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32.
void put_key(std::string& out, int field, int wire_type) { put_varint(out, static_cast<uint64_t>(field << 3 | wire_type)); }

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_key(out, field, 2);
  put_varint(out, bytes.size());
  out += bytes;
}

// An Event with wall_time and step; the caller adds its payload.
std::string event_header(int64_t step) {
  std::string e;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  put_key(e, 1, 1);
  put_le(e, now);
  put_key(e, 2, 0);
  put_varint(e, static_cast<uint64_t>(step));
  return e;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  for (char* p = name; *p != '\0'; ++p)
    if (*p == '/') *p = '_';
  return name;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static constexpr std::array<uint32_t, 256> table = crc32c_table();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

EventFileWriter::EventFileWriter(const std::filesystem::path& dir) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string name = "events.out.tfevents." + std::to_string(seconds) + "." + host_name() + "." +
                           std::to_string(static_cast<long>(::getpid()));
  prepare_output_dir(dir, "--tensorboard", name);
  path_ = dir / name;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw RuntimeError("cannot create " + path_.string() + ": " + std::strerror(errno));
  std::string e = event_header(0);
  put_bytes(e, 3, "brain.Event:2");
  write_event(e);
}

EventFileWriter::~EventFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void EventFileWriter::add_scalar(const std::string& tag, float value, int64_t step) {
  std::string v;
  put_bytes(v, 1, tag);
  put_key(v, 2, 5);
  put_le(v, value);
  std::string summary;
  put_bytes(summary, 1, v);
  std::string e = event_header(step);
  put_bytes(e, 5, summary);
  write_event(e);
}

void EventFileWriter::write_event(const std::string& event) {
  std::string record;
  put_le(record, static_cast<uint64_t>(event.size()));
  put_le(record, masked_crc(record));
  record += event;
  put_le(record, masked_crc(event));
  // One write per record, straight to the file: TensorBoard sees it at once.
  const char* p = record.data();
  size_t left = record.size();
  while (left > 0) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw RuntimeError("writing " + path_.string() + ": " + std::strerror(errno));
    p += w;
    left -= static_cast<size_t>(w);
  }
}

TensorBoardCallback::TensorBoardCallback(const std::filesystem::path& dir, int64_t every, int64_t batch_size)
    : writer_(dir), every_(every), batch_size_(batch_size) {}

void TensorBoardCallback::on_epoch_begin(int epoch, int, int64_t steps) {
  epoch_ = epoch;
  steps_ = steps;
  last_step_ = -1;  // set by the epoch's first step (a resumed epoch starts midway)
  last_time_ = std::chrono::steady_clock::now();
}

void TensorBoardCallback::on_batch_end(int64_t step, const std::function<nn::MetricValues()>& read) {
  const int64_t global = static_cast<int64_t>(epoch_ - 1) * steps_ + step + 1;
  if (last_step_ < 0) last_step_ = global - 1;
  if (every_ <= 0 || global % every_ != 0) return;
  const nn::MetricValues m = read();
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last_time_).count();
  writer_.add_scalar("batch/loss", static_cast<float>(m.loss), global);
  writer_.add_scalar("batch/accuracy", static_cast<float>(m.accuracy), global);
  for (const auto& [name, value] : m.metrics) writer_.add_scalar("batch/" + name, static_cast<float>(value), global);
  writer_.add_scalar("batch/learning_rate", static_cast<float>(m.learning_rate), global);
  if (seconds > 0)
    writer_.add_scalar("batch/samples_per_second",
                       static_cast<float>(static_cast<double>((global - last_step_) * batch_size_) / seconds), global);
  last_step_ = global;
  last_time_ = now;
}

void TensorBoardCallback::on_epoch_end(const nn::EpochLogs& logs) {
  writer_.add_scalar("epoch/loss", static_cast<float>(logs.loss), logs.epoch);
  writer_.add_scalar("epoch/accuracy", static_cast<float>(logs.accuracy), logs.epoch);
  for (const auto& [name, value] : logs.metrics)
    writer_.add_scalar("epoch/" + name, static_cast<float>(value), logs.epoch);
  writer_.add_scalar("epoch/learning_rate", static_cast<float>(logs.learning_rate), logs.epoch);
  if (logs.has_validation) {
    writer_.add_scalar("epoch/val_loss", static_cast<float>(logs.val_loss), logs.epoch);
    writer_.add_scalar("epoch/val_accuracy", static_cast<float>(logs.val_accuracy), logs.epoch);
    for (const auto& [name, value] : logs.val_metrics)
      writer_.add_scalar("epoch/val_" + name, static_cast<float>(value), logs.epoch);
  }
  if (logs.seconds > 0)
    writer_.add_scalar("epoch/samples_per_second", static_cast<float>(static_cast<double>(logs.samples) / logs.seconds),
                       logs.epoch);
}

}  // namespace axon::train
