// manifest.json: what a command wrote, with enough to check it later (docs/cli.md).
//
// Every output file is listed under "files" with its dtype, shape, byte count and the CRC-32
// of the whole file; verify_manifest() re-reads a directory and checks all of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fp4sim/io/npy.hpp"

namespace fp4sim::io {

// Key order in manifests is the order of insertion (format first, files last), for readers.
using Json = nlohmann::ordered_json;

// The project version (CMake PROJECT_VERSION), recorded in every manifest.
std::string_view tool_version();
// The first keys of every JSON report (--json, report.json): tool "fp4sim", version, command and
// the whole command line.
Json report_header(std::string_view command, const std::vector<std::string>& argv);
// "0x%08x": how manifests, reports and mismatch messages write FP32 bit patterns and scale words.
std::string hex32(uint32_t bits);
// Manifest layout version; bump when a field changes meaning.
inline constexpr int kManifestSchema = 1;

struct FileRecord {
  std::string name;  // relative to the output directory
  DType dtype;
  std::vector<size_t> shape;
  size_t bytes = 0;  // whole file, header included
  uint32_t crc32 = 0;  // of the whole file
};

// Writes .npy files into one StagingDir (durability deferred to its commit) and records each for
// the manifest.
class OutputWriter {
 public:
  explicit OutputWriter(std::filesystem::path dir) : dir_(std::move(dir)) {}

  template <class T>
  void npy(const std::string& name, std::span<const size_t> shape, std::span<const T> values) {
    add(name, DTypeOf<T>::value, shape,
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                 values.size_bytes()));
  }
  void add(const std::string& name, DType dtype, std::span<const size_t> shape,
           std::span<const uint8_t> data);

  // Several files at once, written on up to `threads` threads (largest first) and recorded in the
  // order given, so the manifest does not depend on the thread count.
  struct Job {
    std::string name;
    DType dtype;
    std::vector<size_t> shape;
    std::span<const uint8_t> data;
  };
  template <class T>
  static Job job(std::string name, std::span<const size_t> shape, std::span<const T> values) {
    return {std::move(name), DTypeOf<T>::value, std::vector<size_t>(shape.begin(), shape.end()),
            std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()), values.size_bytes())};
  }
  void add_all(std::span<const Job> jobs, unsigned threads);

  const std::vector<FileRecord>& files() const { return files_; }
  // {"codes.npy": {"dtype": "uint8", "shape": [..], "bytes": n, "crc32": "89abcdef"}, ...}
  Json files_json() const;

 private:
  std::filesystem::path dir_;
  std::vector<FileRecord> files_;
};

// dir/manifest.json, pretty-printed (2 spaces) with a final newline, written atomically.
void write_manifest(const std::filesystem::path& dir, const Json& manifest);
// Parses dir/manifest.json; throws IoError naming the file on unreadable or invalid JSON.
Json read_manifest(const std::filesystem::path& dir);

// Re-reads every file under "files" and checks its byte count, CRC-32, .npy dtype and shape.
// Returns one line per problem; empty means the directory matches its manifest.
std::vector<std::string> verify_manifest(const std::filesystem::path& dir);

}  // namespace fp4sim::io
