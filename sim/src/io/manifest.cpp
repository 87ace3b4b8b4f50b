#include "fp4sim/io/manifest.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/npy.hpp"

#ifndef FP4SIM_VERSION
#error "FP4SIM_VERSION must be defined by the build (sim/CMakeLists.txt)"
#endif

namespace fp4sim::io {
namespace fs = std::filesystem;

std::string_view tool_version() { return FP4SIM_VERSION; }

Json report_header(std::string_view command, const std::vector<std::string>& argv) {
  Json j;
  j["tool"] = "fp4sim";
  j["version"] = tool_version();
  j["command"] = command;
  j["command_line"] = argv;
  return j;
}

std::string hex32(uint32_t bits) {
  char buf[11];
  std::snprintf(buf, sizeof buf, "0x%08x", static_cast<unsigned>(bits));
  return buf;
}

namespace {

// One .npy file in dir: header and data written back to back, without joining them in memory (a
// 16 MB dequant.npy would cost a copy and its page faults). Writers fill staging directories;
// StagingDir::commit makes them durable with one syncfs.
FileRecord write_npy(const fs::path& dir, const std::string& name, DType dtype, std::span<const size_t> shape,
                     std::span<const uint8_t> data) {
  const std::vector<uint8_t> head = npy_header(dtype, shape);
  if (data.size() != shape_elements(shape) * dtype_size(dtype))
    throw NpyError(name + ": " + std::to_string(data.size()) + " data bytes do not match shape " + shape_string(shape));
  const std::span<const uint8_t> parts[2] = {head, data};
  write_file_atomic_parts(dir / name, parts, Durability::Deferred);
  return FileRecord{name, dtype, std::vector<size_t>(shape.begin(), shape.end()), head.size() + data.size(),
                    crc32(data, crc32(head))};
}

}  // namespace

void OutputWriter::add(const std::string& name, DType dtype, std::span<const size_t> shape,
                       std::span<const uint8_t> data) {
  files_.push_back(write_npy(dir_, name, dtype, shape, data));
}

void OutputWriter::add_all(std::span<const Job> jobs, unsigned threads) {
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].data.size() > jobs[b].data.size(); });
  std::vector<FileRecord> rec(jobs.size());
  std::atomic<size_t> next{0};
  std::exception_ptr err;
  std::mutex mu;
  auto worker = [&] {
    for (size_t k; (k = next.fetch_add(1)) < order.size();) {
      const Job& j = jobs[order[k]];
      try {
        rec[order[k]] = write_npy(dir_, j.name, j.dtype, j.shape, j.data);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mu);
        if (!err) err = std::current_exception();
        next = order.size();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < std::min<size_t>(threads, jobs.size()); ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {  // no more threads: the started ones write the rest
      break;
    }
  }
  worker();
  for (auto& t : pool) t.join();
  if (err) std::rethrow_exception(err);
  for (FileRecord& r : rec) files_.push_back(std::move(r));
}

Json OutputWriter::files_json() const {
  Json j = Json::object();
  for (const FileRecord& f : files_) {
    j[f.name] = Json{{"dtype", dtype_name(f.dtype)},
                     {"shape", f.shape},
                     {"bytes", f.bytes},
                     {"crc32", crc32_hex(f.crc32)}};
  }
  return j;
}

void write_manifest(const fs::path& dir, const Json& manifest) {
  write_file_atomic(dir / "manifest.json", manifest.dump(2) + "\n");
}

Json read_manifest(const fs::path& dir) {
  const fs::path p = dir / "manifest.json";
  std::vector<uint8_t> bytes = read_file(p);
  try {
    return Json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::exception& e) {
    throw IoError(p.string() + ": invalid JSON: " + e.what());
  }
}

std::vector<std::string> verify_manifest(const fs::path& dir) {
  std::vector<std::string> problems;
  Json m;
  try {
    m = read_manifest(dir);
  } catch (const std::exception& e) {
    problems.push_back(e.what());
    return problems;
  }
  if (!m.contains("files") || !m["files"].is_object()) {
    problems.push_back((dir / "manifest.json").string() + ": no \"files\" object");
    return problems;
  }
  for (const auto& [name, rec] : m["files"].items()) {
    const fs::path p = dir / name;
    try {
      std::vector<uint8_t> bytes = read_file(p);
      if (rec.at("bytes").get<size_t>() != bytes.size())
        problems.push_back(p.string() + ": " + std::to_string(bytes.size()) +
                           " bytes, manifest says " + std::to_string(rec.at("bytes").get<size_t>()));
      const std::string crc = crc32_hex(crc32(bytes));
      if (rec.at("crc32").get<std::string>() != crc)
        problems.push_back(p.string() + ": CRC-32 " + crc + ", manifest says " +
                           rec.at("crc32").get<std::string>());
      NpyArray a = parse_npy(bytes, p.string());
      if (rec.at("dtype").get<std::string>() != dtype_name(a.dtype))
        problems.push_back(p.string() + ": dtype " + std::string(dtype_name(a.dtype)) +
                           ", manifest says " + rec.at("dtype").get<std::string>());
      if (rec.at("shape").get<std::vector<size_t>>() != a.shape)
        problems.push_back(p.string() + ": shape " + shape_string(a.shape) +
                           " differs from the manifest");
    } catch (const std::exception& e) {
      problems.push_back(e.what());
    }
  }
  return problems;
}

}  // namespace fp4sim::io
