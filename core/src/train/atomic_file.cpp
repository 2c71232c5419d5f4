#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/train/atomic_file.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <string>

namespace fs = std::filesystem;

namespace axon::train {
namespace {

// Room for ".", ".tmp." and a pid inside the file system's 255-byte names.
constexpr size_t kTempStemMax = NAME_MAX - 24;

[[noreturn]] void refuse(const std::string& what, const fs::path& target, const std::string& why) {
  throw UsageError(what + " " + target.string() + ": " + why);
}

// Where the bytes go: the target, or the file a symbolic link names.
// Refuses names that cannot be a regular file.
fs::path resolve(const fs::path& target, const std::string& what) {
  if (target.empty()) throw UsageError(what + ": the file name is empty");
  if (target.filename().empty() || target.filename() == "." || target.filename() == "..")
    refuse(what, target, "names a folder, not a file");
  if (target.filename().string().size() > NAME_MAX)
    refuse(what, target, "the file name is longer than " + std::to_string(NAME_MAX) + " bytes");
  fs::path real = target;
  struct stat st{};
  if (::lstat(target.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    real = fs::weakly_canonical(target, ec);
    if (ec) refuse(what, target, "cannot follow the symbolic link: " + ec.message());
  }
  if (::stat(real.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode))
      refuse(what, target, std::string("is ") + io::file_kind(st.st_mode) + "; axon writes regular files only");
  }
  return real;
}

fs::path folder_of(const fs::path& p) {
  fs::path f = p.parent_path();
  return f.empty() ? fs::path(".") : f;
}

std::string temp_stem(const fs::path& real) {
  std::string s = ".";  // appended piecewise: GCC 12's -Wrestrict misfires on "." + string
  s += real.filename().string().substr(0, kTempStemMax);
  s += ".tmp.";
  return s;
}

// Removes temporaries of this target whose writer is gone (killed mid-write).
void remove_stale_temps(const fs::path& folder, const std::string& stem) {
  DIR* d = ::opendir(folder.c_str());
  if (d == nullptr) return;
  const long self = static_cast<long>(::getpid());
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= stem.size() || name.compare(0, stem.size(), stem) != 0) continue;
    const std::string digits = name.substr(stem.size());
    if (digits.size() > 10 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const long pid = std::stol(digits);
    if (pid != self && pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      ::unlinkat(::dirfd(d), name.c_str(), 0);
  }
  ::closedir(d);
}

void check_folder(const fs::path& target, const fs::path& folder, const std::string& what) {
  struct stat st{};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    refuse(what, target, "folder " + folder.string() + " does not exist");
}

// Creates the temporary (exclusively, never through a link).
int create_temp(const fs::path& tmp, const fs::path& target, const std::string& what) {
  ::unlink(tmp.c_str());  // this process's own leftover from a failed write
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int e = errno;
    const std::string msg = "cannot create a file in " + folder_of(tmp).string() + ": " + std::strerror(e);
    if (e == EACCES || e == EPERM || e == EROFS || e == ENOENT || e == ENOTDIR || e == ENAMETOOLONG)
      refuse(what, target, msg);
    throw RuntimeError(what + " " + target.string() + ": " + msg);
  }
  return fd;
}

}  // namespace

void check_output_file(const fs::path& target, const std::string& what) {
  const fs::path real = resolve(target, what);
  const fs::path folder = folder_of(real);
  check_folder(target, folder, what);
  const fs::path tmp = folder / (temp_stem(real) + std::to_string(static_cast<long>(::getpid())));
  ::close(create_temp(tmp, target, what));
  ::unlink(tmp.c_str());
}

void prepare_output_dir(const fs::path& dir, const std::string& what, const std::string& probe_name) {
  if (dir.empty()) throw UsageError(what + ": the folder name is empty");
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) throw UsageError(what + " " + dir.string() + ": not a folder");
  } else {
    fs::path parent = dir.parent_path();
    if (parent.empty()) parent = ".";
    if (!fs::is_directory(parent, ec))
      throw UsageError(what + " " + dir.string() + ": folder " + parent.string() + " does not exist");
    if (!fs::create_directory(dir, ec) && ec)
      throw UsageError(what + " " + dir.string() + ": cannot make it: " + ec.message());
  }
  check_output_file(dir / probe_name, what);
}

void write_file_atomically(const fs::path& target, std::string_view bytes) {
  const std::string what = "cannot write";
  const fs::path real = resolve(target, what);
  const fs::path folder = folder_of(real);
  check_folder(target, folder, what);
  const std::string stem = temp_stem(real);
  remove_stale_temps(folder, stem);
  // Same folder, so rename() stays on one file system; the pid keeps two
  // processes writing the same target apart.
  const fs::path tmp = folder / (stem + std::to_string(static_cast<long>(::getpid())));
  const int fd = create_temp(tmp, target, what);
  auto fail = [&](const char* step) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw RuntimeError(std::string(step) + " " + tmp.string() + " (for " + target.string() + "): " + std::strerror(e));
  };
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("writing");
    }
    p += w;
    left -= static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0) fail("flushing");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("closing " + tmp.string() + ": " + std::strerror(e));
  }
  if (::rename(tmp.c_str(), real.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError("renaming " + tmp.string() + " to " + real.string() + ": " + std::strerror(e));
  }
  // The rename itself is durable only once the folder is flushed.
  const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

bool same_file(const fs::path& a, const fs::path& b) {
  struct stat sa{}, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ea), cb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && ca == cb;
}

}  // namespace axon::train
