#include <axon/data/zip_archive.hpp>
#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <zip.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace axon::data {
namespace {

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

class MemberStream : public ByteStream {
 public:
  MemberStream(zip_file_t* file, std::string name, uint64_t size) : file_(file), name_(std::move(name)), left_(size) {}
  ~MemberStream() override { zip_fclose(file_); }
  MemberStream(const MemberStream&) = delete;
  MemberStream& operator=(const MemberStream&) = delete;
  size_t read_some(void* dst, size_t n) override {
    // Never past the declared size (+1 byte, to see whether it lies), so a
    // stream that inflates further costs nothing.
    const uint64_t want = std::min<uint64_t>(n, left_ + 1);
    if (want == 0) return 0;
    const zip_int64_t r = zip_fread(file_, dst, want);
    if (r < 0) throw UsageError(name_ + ": corrupt zip member: " + zip_error_strerror(zip_file_get_error(file_)));
    if (static_cast<uint64_t>(r) > left_)
      throw UsageError(name_ + ": the zip member inflates to more bytes than its entry declares (a zip bomb?)");
    left_ -= static_cast<uint64_t>(r);
    return static_cast<size_t>(r);
  }
  const std::string& name() const override { return name_; }

 private:
  zip_file_t* file_;
  std::string name_;
  uint64_t left_;
};

}  // namespace

ZipArchive::ZipArchive(const std::filesystem::path& file) : name_(file.string()) {
  const std::string what = not_a_regular_file(file);
  if (!what.empty()) throw UsageError(name_ + ": " + what);
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw UsageError(name_ + ": cannot open: " + std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UsageError(name_ + ": is not a regular file");
  }
  file_size_ = static_cast<uint64_t>(st.st_size);
  int err = 0;
  // libzip works on a dup of fd and closes fd itself only when it succeeds.
  archive_ = zip_fdopen(fd, ZIP_CHECKCONS, &err);
  if (archive_ == nullptr) {
    ::close(fd);
    throw UsageError(name_ + ": not a readable zip archive: " + zip_error_text(err));
  }
  list_members();
}

ZipArchive::ZipArchive(std::span<const uint8_t> bytes, std::string name) : name_(std::move(name)) {
  file_size_ = bytes.size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source != nullptr) {
    archive_ = zip_open_from_source(source, ZIP_CHECKCONS | ZIP_RDONLY, &error);
    if (archive_ == nullptr) zip_source_free(source);
  }
  if (archive_ == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw UsageError(name_ + ": not a readable zip archive: " + why);
  }
  zip_error_fini(&error);
  list_members();
}

void ZipArchive::list_members() {
  const zip_int64_t n = zip_get_num_entries(archive_, 0);
  if (n < 0 || static_cast<uint64_t>(n) > kMaxZipMembers) {
    zip_discard(archive_);
    archive_ = nullptr;
    throw UsageError(name_ + ": the zip archive lists " + std::to_string(n) + " members, more than the limit of " +
                     std::to_string(kMaxZipMembers));
  }
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t entry;
    zip_stat_init(&entry);
    if (zip_stat_index(archive_, static_cast<zip_uint64_t>(i), 0, &entry) != 0 || (entry.valid & ZIP_STAT_NAME) == 0) {
      const std::string why = zip_error_strerror(zip_get_error(archive_));
      zip_discard(archive_);
      archive_ = nullptr;
      throw UsageError(name_ + ": corrupt zip archive: member " + std::to_string(i) + ": " + why);
    }
    Member m;
    m.name = entry.name;
    m.index = static_cast<uint64_t>(i);
    m.size = (entry.valid & ZIP_STAT_SIZE) ? entry.size : 0;
    m.compressed_size = (entry.valid & ZIP_STAT_COMP_SIZE) ? entry.comp_size : 0;
    m.method = (entry.valid & ZIP_STAT_COMP_METHOD) ? entry.comp_method : 0;
    m.encrypted = (entry.valid & ZIP_STAT_ENCRYPTION_METHOD) && entry.encryption_method != ZIP_EM_NONE;
    members_.push_back(std::move(m));
  }
}

ZipArchive::~ZipArchive() {
  if (archive_ != nullptr) zip_discard(archive_);
}

const ZipArchive::Member* ZipArchive::find(const std::string& member) const {
  for (const Member& m : members_)
    if (m.name == member) return &m;
  return nullptr;
}

std::unique_ptr<ByteStream> ZipArchive::open(const Member& m) {
  const std::string what = name_ + ": " + parse::printable(m.name);
  if (m.encrypted) throw UsageError(what + ": the zip member is encrypted");
  if (m.method != ZIP_CM_STORE && m.method != ZIP_CM_DEFLATE)
    throw UsageError(what + ": the zip member is compressed with method " + std::to_string(m.method) +
                     "; axon reads stored (0) or deflated (8) members, as NumPy and Keras write them");
  if (m.compressed_size > file_size_)
    throw UsageError(what + ": the zip entry claims " + std::to_string(m.compressed_size) +
                     " compressed bytes, more than the archive's " + std::to_string(file_size_));
  if (m.method == ZIP_CM_STORE && m.size != m.compressed_size)
    throw UsageError(what + ": the stored zip entry declares " + std::to_string(m.size) + " bytes but holds " +
                     std::to_string(m.compressed_size));
  if (m.size > kMinInflateCheckBytes && m.size / kMaxInflateRatio > m.compressed_size)
    throw UsageError(what + ": the zip member would inflate " + std::to_string(m.compressed_size) + " bytes to " +
                     std::to_string(m.size) + ", more than " + std::to_string(kMaxInflateRatio) +
                     " times: refused as a zip bomb");
  zip_file_t* f = zip_fopen_index(archive_, m.index, 0);
  if (f == nullptr) throw UsageError(what + ": cannot read the zip member: " + zip_error_strerror(zip_get_error(archive_)));
  return std::make_unique<MemberStream>(f, what, m.size);
}

}  // namespace axon::data
