// Files and directories that appear complete or not at all.
//
// A file is written to a uniquely named temporary in the same directory and renamed over the
// target (rename(2) is atomic within one file system). A result directory is staged as
// DIR.tmp-XXXXXX and renamed to DIR on commit(); if anything fails before that, the stage is
// removed, so a reader never sees a half-written output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fp4sim::io {

// Every I/O failure: the message names the path and the reason, on one line.
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whole file into memory. Throws IoError("PATH: reason").
std::vector<uint8_t> read_file(const std::filesystem::path& path);

// ---- The output policy of every command (docs/cli.md "Outputs") ----
//
// Durability is a process-wide choice (--durable). Off (the default): outputs are atomic (a
// temporary name, then rename(2)) but not flushed, so a crash of fp4sim never exposes a half-written
// output, while a crash of the machine within the kernel's writeback delay may lose a just-written
// one. On: every file is fsync'ed before its rename, a staged directory's file system is synced
// once (syncfs) before the directory appears, and the folder holding the renamed output is fsync'ed.
void set_durable(bool on);
bool durable();

// When a written file reaches the disk if durable(): Fsync before its rename (a lone output file),
// or Deferred to StagingDir::commit / OutputSet::commit, which sync the file system once before the
// whole directory appears (a suite of ~1,300 files would otherwise pay ~1,300 fsyncs).
enum class Durability { Fsync, Deferred };

// Temporaries that a signal must not leave behind. install_signal_cleanup() (once, at the start of
// main(), before any thread exists) blocks SIGINT, SIGTERM and SIGHUP in the calling thread (threads
// inherit the mask) and waits for them in a thread of its own, which removes every registered path
// (recursively) and then lets the signal end the process as it would have.
void install_signal_cleanup();
class TempRegistration {
 public:
  TempRegistration() = default;
  explicit TempRegistration(const std::filesystem::path& p);
  ~TempRegistration() { release(); }
  TempRegistration(TempRegistration&& o) noexcept : id_(o.id_) { o.id_ = 0; }
  TempRegistration& operator=(TempRegistration&& o) noexcept;
  TempRegistration(const TempRegistration&) = delete;
  TempRegistration& operator=(const TempRegistration&) = delete;
  void release();  // the path is no temporary any more (renamed into place, or removed)

 private:
  uint64_t id_ = 0;
};
// Held while temporaries are renamed into place and released, so that the signal cleanup sees each
// output either staged (and removes it) or committed (and keeps it), never half of a set.
std::unique_lock<std::recursive_mutex> lock_commits();

// Writes bytes to PATH via PATH's directory/.NAME.tmp-XXXXXX + fsync (if durable() and not
// Deferred) + rename. The temporary is removed on any failure and on a signal. Throws IoError.
void write_file_atomic(const std::filesystem::path& path, std::span<const uint8_t> bytes,
                       Durability durability = Durability::Fsync);
void write_file_atomic(const std::filesystem::path& path, std::string_view text);
// The same for bytes in several pieces (a header and the data behind it), written with one
// writev-style pass, without joining them in memory first.
void write_file_atomic_parts(const std::filesystem::path& path, std::span<const std::span<const uint8_t>> parts,
                             Durability durability = Durability::Fsync);

// A staging directory for one result directory.
class StagingDir {
 public:
  // Creates FINAL.tmp-XXXXXX next to FINAL. The parent of FINAL must exist. Throws IoError.
  explicit StagingDir(std::filesystem::path final_dir);
  ~StagingDir();  // removes the stage unless commit() succeeded
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::filesystem::path& path() const { return stage_; }
  const std::filesystem::path& final_path() const { return final_; }

  // If durable(): syncs the file system holding the stage (so Deferred files are on disk). Then
  // moves the stage to FINAL. If FINAL exists: with replace = false throws IoError and keeps
  // FINAL untouched; with replace = true swaps the two atomically (renameat2 RENAME_EXCHANGE,
  // falling back to rename-aside-then-rename where the file system lacks it) and deletes the old
  // content. FINAL must be a directory if it exists.
  void commit(bool replace);

 private:
  std::filesystem::path final_;
  std::filesystem::path stage_;
  bool committed_ = false;
  TempRegistration reg_;
};

// The outputs of one command, files and directories, handled as one: each is checked when declared
// (before any work: a bad name, a missing parent folder, an existing output without `force`, an
// existing output of the other kind), written to a temporary sibling, and all are renamed into place
// together by commit(). A failure of commit() puts back what it had replaced; destroying the set
// without commit() (an exception, a failed run) removes every temporary. Messages: "PATH: reason".
class OutputSet {
 public:
  explicit OutputSet(bool force) : force_(force) {}
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // Declares an output and checks it; returns its handle. `create_parent`: a missing parent folder is
  // created at commit (only for a command's default output path, never for one the user named).
  size_t add_file(const std::filesystem::path& path, bool create_parent = false);
  size_t add_dir(const std::filesystem::path& path, bool create_parent = false);

  // The staging directory of a directory output (created on first use), to be filled by the caller.
  const std::filesystem::path& dir_stage(size_t h);
  // A file output's contents (staged now, renamed at commit).
  void write(size_t h, std::span<const uint8_t> bytes);
  void write(size_t h, std::string_view text);
  // A temporary name for a file output that a library writes itself (a waveform): the caller creates
  // the file there; commit() renames it (a file not created by then is an error). The name ends in
  // `suffix` (for writers that append an extension unless the name has it).
  std::filesystem::path file_stage(size_t h, std::string_view suffix = "");
  // Where PATH is written before the commit when it lies inside a declared directory output (e.g.
  // --trace OUT/models.vcd with --out OUT); nullopt otherwise.
  std::optional<std::filesystem::path> staged_location(const std::filesystem::path& path);

  const std::filesystem::path& final_path(size_t h) const { return items_.at(h).final_path; }
  void commit();

 private:
  struct Item {
    std::filesystem::path final_path;
    bool is_dir = false, create_parent = false, existed = false;
    std::filesystem::path stage;
    TempRegistration reg;
  };
  size_t add(const std::filesystem::path& path, bool is_dir, bool create_parent);
  bool force_;
  bool committed_ = false;
  std::vector<Item> items_;
};

}  // namespace fp4sim::io
