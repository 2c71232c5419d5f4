#include <axon/error.hpp>
#include <axon/io/zip_writer.hpp>

#include <zip.h>

#include <memory>

namespace axon::io {
namespace {

[[noreturn]] void fail(const std::string& what, zip_error_t* error) {
  throw RuntimeError("zip writer: " + what + ": " + zip_error_strerror(error));
}

// Gives up on `archive` (nothing is written) and reports its error.
[[noreturn]] void discard(zip_t* archive, const std::string& what) {
  zip_error_t error;
  zip_error_init(&error);
  zip_error_set(&error, zip_error_code_zip(zip_get_error(archive)), zip_error_code_system(zip_get_error(archive)));
  zip_discard(archive);
  const std::string why = zip_error_strerror(&error);
  zip_error_fini(&error);
  throw RuntimeError("zip writer: " + what + ": " + why);
}

}  // namespace

std::string zip_stored(const std::vector<std::pair<std::string, std::string_view>>& members) {
  // The archive is written into a growing buffer kept past zip_close.
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr) fail("a buffer", &error);
  zip_source_keep(buffer);
  const std::unique_ptr<zip_source_t, decltype(&zip_source_free)> owned(buffer, &zip_source_free);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  if (archive == nullptr) fail("opening the archive", &error);
  for (const auto& [name, bytes] : members) {
    zip_source_t* s = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    if (s == nullptr) discard(archive, name);
    const zip_int64_t index = zip_file_add(archive, name.c_str(), s, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(s);
      discard(archive, name);
    }
    if (zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
      discard(archive, name);
  }
  if (zip_close(archive) != 0) discard(archive, "closing the archive");
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_source_stat(buffer, &st) != 0 || (st.valid & ZIP_STAT_SIZE) == 0 || zip_source_open(buffer) != 0)
    fail("reading the archive back", zip_source_error(buffer));
  std::string out(static_cast<size_t>(st.size), '\0');
  const zip_int64_t got = zip_source_read(buffer, out.data(), st.size);
  zip_source_close(buffer);
  if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) fail("reading the archive back", zip_source_error(buffer));
  return out;
}

}  // namespace axon::io
