#include "fp4sim/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <cstring>
#include <system_error>

namespace fp4sim::io {
namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const fs::path& p, std::string_view what, int err) {
  std::string msg = p.string() + ": " + std::string(what);
  if (err != 0) msg += ": " + std::string(std::strerror(err));
  throw IoError(msg);
}

// An empty parent means the current directory.
fs::path parent_of(const fs::path& p) {
  fs::path parent = p.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

// Best-effort removal used on error paths; never throws.
void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

void write_all(int fd, const fs::path& shown, std::span<const uint8_t> bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(shown, "write failed", errno);
    }
    done += static_cast<size_t>(n);
  }
}

std::string random_suffix() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t base = (static_cast<uint64_t>(std::random_device{}()) << 32) ^
                               static_cast<uint64_t>(::getpid());
  uint64_t v = base + 0x9E3779B97F4A7C15ull * (counter.fetch_add(1) + 1);
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 8; ++i, v /= 36) s += kChars[v % 36];
  return s;
}

// BASE + tag + random suffix, created with mkdir(0777) so the umask applies as for any new
// directory (mkdtemp would make it 0700).
fs::path make_unique_dir(const fs::path& base, const char* tag, const char* what) {
  for (int attempt = 0;; ++attempt) {
    std::string name = base.string();
    name += tag;
    name += random_suffix();
    if (::mkdir(name.c_str(), 0777) == 0) return name;
    if (errno != EEXIST || attempt >= 100) fail(base, what, errno);
  }
}

}  // namespace

std::vector<uint8_t> read_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open", errno);
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      // Reading a directory fails here with EISDIR.
      fail(path, "cannot read", err);
    }
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
  ::close(fd);
  return out;
}

void write_file_atomic(const fs::path& path, std::span<const uint8_t> bytes, Durability durability) {
  if (path.filename().empty()) fail(path, "not a file name", 0);
  // O_EXCL with a fresh random suffix instead of mkstemp: mkstemp creates mode 0600, while
  // open(0666) lets the kernel apply the umask like for any new file, without touching the
  // process-wide umask.
  fs::path tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    // Appended piecewise: GCC 12 emits a false -Wrestrict for `"." + std::string`.
    std::string name = ".";
    name += path.filename().string();
    name += ".tmp-";
    name += random_suffix();
    tmp = parent_of(path) / name;
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 100))
      fail(path, "cannot create temporary file", errno);
  }
  try {
    write_all(fd, path, bytes);
    if (durability == Durability::Fsync && ::fsync(fd) != 0) fail(path, "fsync failed", errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "close failed", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot rename temporary file into place", err);
  }
}

void write_file_atomic(const fs::path& path, std::string_view text) {
  write_file_atomic(path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()),
                                                   text.size()));
}

StagingDir::StagingDir(fs::path final_dir) : final_(std::move(final_dir)) {
  // "out/" names the directory "out": drop trailing separators so the stage is a sibling.
  while (!final_.empty() && final_.filename().empty() && final_ != final_.root_path())
    final_ = final_.parent_path();
  if (final_.empty() || final_.filename() == "." || final_.filename() == "..")
    fail(final_dir, "not a usable output directory name", 0);
  fs::path parent = parent_of(final_);
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) fail(final_, "parent directory does not exist", 0);
  stage_ = make_unique_dir(final_, ".tmp-", "cannot create staging directory");
}

StagingDir::~StagingDir() {
  if (!committed_) remove_quietly(stage_);
}

void StagingDir::commit(bool replace) {
  // One syncfs for every file written into the stage with Durability::Deferred.
  const int dfd = ::open(stage_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) fail(stage_, "cannot open staging directory", errno);
  const int sync_rc = ::syncfs(dfd);
  const int sync_err = errno;
  ::close(dfd);
  if (sync_rc != 0) fail(stage_, "syncfs failed", sync_err);
  std::error_code ec;
  fs::file_status st = fs::symlink_status(final_, ec);
  bool exists = fs::exists(st);
  if (exists && !replace) fail(final_, "already exists", 0);
  if (exists && !fs::is_directory(st)) fail(final_, "exists and is not a directory", 0);
  if (!exists) {
    // rename(2) onto a missing name; if another process created FINAL meanwhile as an empty
    // directory, rename would silently replace it, so use RENAME_NOREPLACE where available.
    if (::renameat2(AT_FDCWD, stage_.c_str(), AT_FDCWD, final_.c_str(), RENAME_NOREPLACE) == 0) {
      committed_ = true;
      return;
    }
    int err = errno;
    if (err == EEXIST) fail(final_, "already exists", 0);
    if (err != EINVAL && err != ENOSYS) fail(final_, "cannot rename staging directory", err);
    if (::rename(stage_.c_str(), final_.c_str()) != 0)
      fail(final_, "cannot rename staging directory", errno);
    committed_ = true;
    return;
  }
  // Replace: swap atomically so FINAL is always either the old or the new complete directory.
  if (::renameat2(AT_FDCWD, stage_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    remove_quietly(stage_);  // now holds the old content
    return;
  }
  int err = errno;
  if (err != EINVAL && err != ENOSYS) fail(final_, "cannot replace existing directory", err);
  // Fallback: move the old directory aside, move the new one in, then delete the old one.
  const fs::path aside = make_unique_dir(final_, ".old-", "cannot create aside directory");
  if (::rename(final_.c_str(), aside.c_str()) != 0) {
    int e2 = errno;
    remove_quietly(aside);
    fail(final_, "cannot move existing directory aside", e2);
  }
  if (::rename(stage_.c_str(), final_.c_str()) != 0) {
    int e2 = errno;
    ::rename(aside.c_str(), final_.c_str());  // put the old one back
    fail(final_, "cannot rename staging directory", e2);
  }
  committed_ = true;
  remove_quietly(aside);
}

}  // namespace fp4sim::io
