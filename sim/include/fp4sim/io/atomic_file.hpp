// Files and directories that appear complete or not at all.
//
// A file is written to a uniquely named temporary in the same directory and renamed over the
// target (rename(2) is atomic within one file system). A result directory is staged as
// DIR.tmp-XXXXXX and renamed to DIR on commit(); if anything fails before that, the stage is
// removed, so a reader never sees a half-written output.
#pragma once

#include <cstdint>
#include <filesystem>
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

// When a written file reaches the disk: Fsync before its rename (a lone output file), or Deferred
// to StagingDir::commit, which syncs the file system once before the whole directory appears
// (a suite of ~1,300 files would otherwise pay ~1,300 fsyncs).
enum class Durability { Fsync, Deferred };

// Writes bytes to PATH via PATH's directory/.NAME.tmp-XXXXXX + fsync (unless Deferred) + rename.
// The temporary is removed on any failure. Throws IoError.
void write_file_atomic(const std::filesystem::path& path, std::span<const uint8_t> bytes,
                       Durability durability = Durability::Fsync);
void write_file_atomic(const std::filesystem::path& path, std::string_view text);

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

  // Syncs the file system holding the stage (so Deferred files are on disk), then moves the
  // stage to FINAL. If FINAL exists: with replace = false throws IoError and keeps
  // FINAL untouched; with replace = true swaps the two atomically (renameat2 RENAME_EXCHANGE,
  // falling back to rename-aside-then-rename where the file system lacks it) and deletes the old
  // content. FINAL must be a directory if it exists.
  void commit(bool replace);

 private:
  std::filesystem::path final_;
  std::filesystem::path stage_;
  bool committed_ = false;
};

}  // namespace fp4sim::io
