// Shared by the fuzz targets that need files on disk: a scratch directory holding a small real suite
// (three smoke cases: NVFP4 from floats, MXFP4 codes, HiF4 codes), made once per process.
#pragma once

#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fp4sim/io/manifest.hpp"

namespace fp4sim::fuzz {

inline std::filesystem::path& scratch_root() {
  static std::filesystem::path p;
  return p;
}

inline void remove_scratch() {
  std::error_code ec;
  if (!scratch_root().empty()) std::filesystem::remove_all(scratch_root(), ec);
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// DIR/suite: the small suite, rebuilt from the committed seeds (make_corpus.sh): the manifest is
// corpus/manifest/suite.json, and corpus/suite_loader/NN-NAME holds file NN of its "files" table after
// one selector byte. Built from files rather than by fp4sim::vectors so that the fuzzers exercise the
// readers only, whatever the state of the numerics that compute expected outputs.
inline const std::filesystem::path& suite_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fp4sim_fuzz_XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    scratch_root() = tmpl;
    std::atexit(remove_scratch);
    const std::filesystem::path corpus = FP4SIM_FUZZ_CORPUS, d = scratch_root() / "suite";
    const std::string text = read_text(corpus / "manifest" / "suite.json");
    const io::Json m = io::Json::parse(text);
    size_t i = 0;
    for (const auto& [name, rec] : m.at("files").items()) {
      char prefix[8];
      std::snprintf(prefix, sizeof prefix, "%02zu-", i++);
      const std::filesystem::path seed =
          corpus / "suite_loader" / (prefix + std::filesystem::path(name).filename().string());
      const std::string bytes = read_text(seed);
      if (bytes.empty()) std::abort();  // the corpus and the manifest seed disagree: rerun make_corpus.sh
      std::filesystem::create_directories((d / name).parent_path());
      std::ofstream(d / name, std::ios::binary).write(bytes.data() + 1, static_cast<std::streamsize>(bytes.size() - 1));
    }
    std::ofstream(d / "manifest.json", std::ios::binary) << text;
    return d;
  }();
  return dir;
}


inline void write_bytes(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) std::abort();
}

}  // namespace fp4sim::fuzz
