#include "fp4sim/io/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <random>
#include <system_error>
#include <thread>

namespace fp4sim::io {
namespace fs = std::filesystem;

namespace {

std::atomic<bool> g_durable{false};

// The temporaries a signal must remove. Never destroyed: the signal thread may use it while the
// process exits.
struct Registry {
  std::recursive_mutex mu;
  std::map<uint64_t, std::string> paths;
  uint64_t next = 1;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

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
// directory (mkdtemp would make it 0700). With reg (a staging directory, removed on a signal) the
// name is registered before the mkdir, so that no signal can fall between creating it and
// registering it (a name that turns out to exist already is unregistered before the next try).
// Without (an aside directory that will hold an old output) it is never removed on a signal.
fs::path make_unique_dir(const fs::path& base, const char* tag, const char* what, TempRegistration* reg = nullptr) {
  for (int attempt = 0;; ++attempt) {
    std::string name = base.string();
    name += tag;
    name += random_suffix();
    if (reg) *reg = TempRegistration(name);
    if (::mkdir(name.c_str(), 0777) == 0) return name;
    const int err = errno;
    if (reg) reg->release();
    if (err != EEXIST || attempt >= 100) fail(base, what, err);
  }
}

// fsync of a folder, so that a rename in it survives a power loss (durable() only).
void sync_dir(const fs::path& dir, const fs::path& shown) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(shown, "cannot open its folder to sync it", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail(shown, "fsync of its folder failed", err);
}

void sync_fs_of(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(p, "cannot open to sync", errno);
  const int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail(p, "syncfs failed", err);
}

}  // namespace

void set_durable(bool on) { g_durable = on; }
bool durable() { return g_durable; }

TempRegistration::TempRegistration(const fs::path& p) {
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  id_ = r.next++;
  r.paths.emplace(id_, p.string());
}

TempRegistration& TempRegistration::operator=(TempRegistration&& o) noexcept {
  if (this != &o) {
    release();
    id_ = o.id_;
    o.id_ = 0;
  }
  return *this;
}

void TempRegistration::release() {
  if (id_ == 0) return;
  Registry& r = registry();
  std::lock_guard<std::recursive_mutex> lock(r.mu);
  r.paths.erase(id_);
  id_ = 0;
}

std::unique_lock<std::recursive_mutex> lock_commits() { return std::unique_lock<std::recursive_mutex>(registry().mu); }

void install_signal_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    // Blocked here and in every thread started later; only the waiter below receives them, in a
    // normal thread context where removing directories is safe (a handler could not).
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set] {
      int sig = 0;
      while (sigwait(&set, &sig) != 0) {
      }
      Registry& r = registry();
      r.mu.lock();  // kept: a commit in progress finishes first, none starts after
      for (const auto& [id, path] : r.paths) {
        std::error_code ec;
        fs::remove_all(path, ec);
      }
      std::signal(sig, SIG_DFL);
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      ::raise(sig);  // ends the process with the signal's status, as without the cleanup
      ::_exit(128 + sig);
    }).detach();
  });
}

std::vector<uint8_t> read_file(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open", errno);
  // A regular file is read straight into a buffer of its size (one copy, no regrowth); pipes and
  // files that grow meanwhile continue in chunks.
  std::vector<uint8_t> out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size) + 1);
  size_t used = 0;
  for (;;) {
    if (out.size() - used < 4096) out.resize(std::max<size_t>(out.capacity(), used + (1 << 16)));
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      // Reading a directory fails here with EISDIR.
      fail(path, "cannot read", err);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(used);
  return out;
}

void write_file_atomic(const fs::path& path, std::span<const uint8_t> bytes, Durability durability) {
  const std::span<const uint8_t> one[1] = {bytes};
  write_file_atomic_parts(path, one, durability);
}

void write_file_atomic_parts(const fs::path& path, std::span<const std::span<const uint8_t>> parts,
                             Durability durability) {
  if (path.filename().empty()) fail(path, "not a file name", 0);
  // O_EXCL with a fresh random suffix instead of mkstemp: mkstemp creates mode 0600, while
  // open(0666) lets the kernel apply the umask like for any new file, without touching the
  // process-wide umask.
  // The name is registered before the file exists (see make_unique_dir).
  fs::path tmp;
  TempRegistration reg;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    // Appended piecewise: GCC 12 emits a false -Wrestrict for `"." + std::string`.
    std::string name = ".";
    name += path.filename().string();
    name += ".tmp-";
    name += random_suffix();
    tmp = parent_of(path) / name;
    reg = TempRegistration(tmp);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int err = errno;
      reg.release();
      if (err != EEXIST || attempt >= 100) fail(path, "cannot create temporary file", err);
    }
  }
  try {
    for (std::span<const uint8_t> part : parts) write_all(fd, path, part);
    if (durable() && durability == Durability::Fsync && ::fsync(fd) != 0) fail(path, "fsync failed", errno);
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
  {
    auto lock = lock_commits();
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      ::unlink(tmp.c_str());
      fail(path, "cannot rename temporary file into place", err);
    }
    reg.release();
  }
  if (durable() && durability == Durability::Fsync) sync_dir(parent_of(path), path);
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
    fail(final_.empty() ? fs::path("''") : final_,
         "not a usable output directory name (name a new directory, e.g. out)", 0);
  fs::path parent = parent_of(final_);
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    fail(final_, "parent directory does not exist", 0);
  stage_ = make_unique_dir(final_, ".tmp-", "cannot create staging directory", &reg_);
}

StagingDir::~StagingDir() {
  if (!committed_) remove_quietly(stage_);
}

void StagingDir::commit(bool replace) {
  // --durable: one syncfs for every file written into the stage with Durability::Deferred.
  if (durable()) sync_fs_of(stage_);
  auto lock = lock_commits();
  struct Done {  // on every successful return below
    StagingDir& s;
    ~Done() {
      if (s.committed_) {
        s.reg_.release();
        if (durable()) {
          std::error_code ec;
          const int fd = ::open(parent_of(s.final_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (fd >= 0) {
            ::fsync(fd);
            ::close(fd);
          }
        }
      }
    }
  } done{*this};
  std::error_code ec;
  fs::file_status st = fs::symlink_status(final_, ec);
  bool exists = fs::exists(st);
  if (exists && !fs::is_directory(st)) fail(final_, "exists and is not a directory; not replacing it", 0);
  if (exists && !replace) fail(final_, "already exists (use --force to replace it)", 0);
  if (!exists) {
    // rename(2) onto a missing name; if another process created FINAL meanwhile as an empty
    // directory, rename would silently replace it, so use RENAME_NOREPLACE where available.
    if (::renameat2(AT_FDCWD, stage_.c_str(), AT_FDCWD, final_.c_str(), RENAME_NOREPLACE) == 0) {
      committed_ = true;
      return;
    }
    int err = errno;
    if (err == EEXIST) fail(final_, "already exists (use --force to replace it)", 0);
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


// ---- OutputSet ----

namespace {

std::string quoted(const fs::path& p) {
  std::string s = "'";  // appended piecewise: GCC 12 emits a false -Wrestrict for "'" + std::string
  s += p.string();
  s += '\'';
  return s;
}

// A hidden sibling name for moving an existing file output aside during a --force commit.
fs::path aside_name(const fs::path& p) {
  std::string name = ".";
  name += p.filename().string();
  name += ".old-";
  name += random_suffix();
  return parent_of(p) / name;
}

// "out/" names "out": trailing separators dropped so the stage is a sibling.
fs::path trimmed(fs::path p) {
  while (!p.empty() && p.filename().empty() && p != p.root_path()) p = p.parent_path();
  return p;
}

// Moves FROM onto the missing name TO; false with errno = EEXIST when TO appeared meanwhile.
bool rename_noreplace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS) return false;
  std::error_code ec;
  if (fs::exists(fs::symlink_status(to, ec))) {
    errno = EEXIST;
    return false;
  }
  return ::rename(from.c_str(), to.c_str()) == 0;
}

}  // namespace

OutputSet::~OutputSet() {
  if (committed_) return;
  for (Item& it : items_)
    if (!it.stage.empty()) remove_quietly(it.stage);
}

size_t OutputSet::add_file(const fs::path& path, bool create_parent) { return add(path, false, create_parent); }
size_t OutputSet::add_dir(const fs::path& path, bool create_parent) { return add(path, true, create_parent); }

size_t OutputSet::add(const fs::path& path_in, bool is_dir, bool create_parent) {
  const fs::path path = is_dir ? trimmed(path_in) : path_in;
  if (path.empty()) fail("''", is_dir ? "empty directory name" : "empty file name", 0);
  if (path.filename().empty() || path.filename() == "." || path.filename() == "..")
    fail(path, is_dir ? "not a usable output directory name (name a new directory, e.g. out)"
                      : "not a file name (name a file in an existing folder)", 0);
  for (const Item& o : items_)
    if (fs::weakly_canonical(o.final_path) == fs::weakly_canonical(path))
      fail(path, "named as two different outputs", 0);
  const fs::path parent = parent_of(path);
  std::error_code ec;
  const fs::file_status pst = fs::status(parent, ec);
  if (!fs::exists(pst)) {
    if (!create_parent) fail(path, "parent directory does not exist", 0);
  } else if (!fs::is_directory(pst)) {
    fail(path, quoted(parent) + " is not a directory", 0);
  } else if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    fail(path, "cannot write in " + quoted(parent), errno);
  }
  const fs::file_status st = fs::symlink_status(path, ec);
  Item it;
  it.final_path = path;
  it.is_dir = is_dir;
  it.create_parent = create_parent;
  it.existed = fs::exists(st);
  if (it.existed) {
    // --force replaces an output of the same kind only: suggesting it elsewhere would not help.
    if (is_dir && !fs::is_directory(st)) fail(path, "exists and is not a directory; not replacing it", 0);
    if (!is_dir && fs::is_directory(st)) fail(path, "is a directory; not replacing it", 0);
    if (!force_) fail(path, "already exists (use --force to replace it)", 0);
  }
  items_.push_back(std::move(it));
  return items_.size() - 1;
}

const fs::path& OutputSet::dir_stage(size_t h) {
  Item& it = items_.at(h);
  if (!it.is_dir) fail(it.final_path, "internal error: not a directory output", 0);
  if (it.stage.empty()) {
    if (it.create_parent) fs::create_directories(parent_of(it.final_path));
    it.stage = make_unique_dir(it.final_path, ".tmp-", "cannot create staging directory", &it.reg);
  }
  return it.stage;
}

fs::path OutputSet::file_stage(size_t h, std::string_view suffix) {
  Item& it = items_.at(h);
  if (it.is_dir) fail(it.final_path, "internal error: not a file output", 0);
  if (it.stage.empty()) {
    std::error_code ec;
    if (it.create_parent) fs::create_directories(parent_of(it.final_path));
    std::string name = ".";
    name += it.final_path.filename().string();
    name += ".tmp-";
    name += random_suffix();
    name += suffix;
    it.stage = parent_of(it.final_path) / name;
    it.reg = TempRegistration(it.stage);
  }
  return it.stage;
}

void OutputSet::write(size_t h, std::span<const uint8_t> bytes) {
  const fs::path tmp = file_stage(h);
  const fs::path& shown = items_[h].final_path;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) fail(shown, "cannot create temporary file", errno);
  try {
    write_all(fd, shown, bytes);
    if (durable() && ::fsync(fd) != 0) fail(shown, "fsync failed", errno);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) fail(shown, "close failed", errno);
}

void OutputSet::write(size_t h, std::string_view text) {
  write(h, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

std::optional<fs::path> OutputSet::staged_location(const fs::path& p) {
  const fs::path want = fs::weakly_canonical(fs::absolute(p));
  for (size_t h = 0; h < items_.size(); ++h) {
    if (!items_[h].is_dir) continue;
    const fs::path root = fs::weakly_canonical(fs::absolute(items_[h].final_path));
    const fs::path rel = want.lexically_relative(root);
    if (!rel.empty() && *rel.begin() != ".." && rel != ".") return dir_stage(h) / rel;
  }
  return std::nullopt;
}

void OutputSet::commit() {
  // Every output staged (an output nobody wrote is a bug of the command, not half a result).
  for (Item& it : items_) {
    if (it.stage.empty() && it.is_dir) dir_stage(static_cast<size_t>(&it - items_.data()));
    std::error_code ec;
    if (it.stage.empty() || !fs::exists(fs::symlink_status(it.stage, ec)))
      fail(it.final_path, "internal error: output was not written", 0);
    if (durable() && it.is_dir) sync_fs_of(it.stage);
  }
  auto lock = lock_commits();
  // What each step did, to undo it if a later one fails: the old output moved aside (--force).
  struct Step {
    Item* it;
    fs::path aside;  // empty: nothing was there
  };
  std::vector<Step> done;
  auto undo = [&] {
    for (auto s = done.rbegin(); s != done.rend(); ++s) {
      if (s->aside.empty()) {
        remove_quietly(s->it->final_path);
      } else if (s->it->is_dir) {
        if (::renameat2(AT_FDCWD, s->aside.c_str(), AT_FDCWD, s->it->final_path.c_str(), RENAME_EXCHANGE) == 0)
          remove_quietly(s->aside);
      } else {
        ::rename(s->aside.c_str(), s->it->final_path.c_str());
      }
    }
  };
  try {
    for (Item& it : items_) {
      std::error_code ec;
      const fs::file_status st = fs::symlink_status(it.final_path, ec);
      Step step{&it, {}};
      if (fs::exists(st)) {
        if (!force_) fail(it.final_path, "already exists (use --force to replace it)", 0);
        if (it.is_dir != fs::is_directory(st))
          fail(it.final_path, it.is_dir ? "exists and is not a directory; not replacing it"
                                        : "is a directory; not replacing it", 0);
        if (it.is_dir &&
            ::renameat2(AT_FDCWD, it.stage.c_str(), AT_FDCWD, it.final_path.c_str(), RENAME_EXCHANGE) == 0) {
          step.aside = it.stage;  // now holds the old content
          done.push_back(step);
          continue;
        }
        // Files, or file systems without RENAME_EXCHANGE: the old output aside first.
        step.aside = it.is_dir ? make_unique_dir(it.final_path, ".old-", "cannot create aside directory")
                               : aside_name(it.final_path);
        if (it.is_dir) ::rmdir(step.aside.c_str());
        if (::rename(it.final_path.c_str(), step.aside.c_str()) != 0)
          fail(it.final_path, "cannot move the existing output aside", errno);
        done.push_back(step);
        if (::rename(it.stage.c_str(), it.final_path.c_str()) != 0)
          fail(it.final_path, "cannot rename the temporary into place", errno);
        continue;
      }
      if (it.create_parent) fs::create_directories(parent_of(it.final_path));
      if (!rename_noreplace(it.stage, it.final_path)) {
        if (errno == EEXIST) fail(it.final_path, "appeared while fp4sim was running; not replacing it", 0);
        fail(it.final_path, "cannot rename the temporary into place", errno);
      }
      done.push_back(step);
    }
  } catch (...) {
    undo();
    throw;
  }
  committed_ = true;
  for (Item& it : items_) it.reg.release();
  for (const Step& s : done)
    if (!s.aside.empty()) remove_quietly(s.aside);
  lock.unlock();
  if (durable())
    for (const Item& it : items_) sync_dir(parent_of(it.final_path), it.final_path);
}

}  // namespace fp4sim::io
