// libFuzzer target: one file of a real suite (fuzz_common.hpp) replaced by arbitrary bytes, with the
// manifest's record of it (bytes, CRC-32, and dtype / shape when the bytes parse) updated to match, so
// that the input gets past the CRC check into the loader's consistency checks (shapes against M, N,
// K, packed against codes, atom against scales, code widths). The first input byte picks the file.
// Reached: vectors::SuiteReader::load and vectors::check_suite.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fp4sim/io/crc32.hpp"
#include "fp4sim/io/npy.hpp"
#include "fuzz_common.hpp"

namespace {

struct Pristine {
  fp4sim::io::Json manifest;
  std::vector<std::string> files;  // the suite's file names
  std::vector<std::vector<uint8_t>> bytes;
};

const Pristine& pristine() {
  static const Pristine p = [] {
    Pristine q;
    const std::filesystem::path& dir = fp4sim::fuzz::suite_dir();
    q.manifest = fp4sim::io::read_manifest(dir);
    for (const auto& [name, rec] : q.manifest["files"].items()) {
      q.files.push_back(name);
      const std::string t = fp4sim::fuzz::read_text(dir / name);
      q.bytes.emplace_back(t.begin(), t.end());
    }
    return q;
  }();
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fp4sim;
  if (size < 1) return 0;
  const Pristine& p = pristine();
  const std::filesystem::path& dir = fuzz::suite_dir();
  const size_t which = data[0] % p.files.size();
  const std::span<const uint8_t> body(data + 1, size - 1);

  io::Json m = p.manifest;
  io::Json& rec = m["files"][p.files[which]];
  rec["bytes"] = body.size();
  rec["crc32"] = io::crc32_hex(io::crc32(body));
  try {
    const io::NpyArray a = io::parse_npy(body, "fuzz");
    rec["dtype"] = io::dtype_name(a.dtype);
    rec["shape"] = a.shape;
  } catch (const io::NpyError&) {
  }
  fuzz::write_bytes(dir / p.files[which], body.data(), body.size());
  const std::string text = m.dump();
  fuzz::write_bytes(dir / "manifest.json", reinterpret_cast<const uint8_t*>(text.data()), text.size());

  const vectors::SuiteReader r(dir);
  for (size_t i = 0; i < r.size(); ++i) (void)r.load(i);
  (void)vectors::check_report_json(vectors::check_suite(dir, dir));

  // Restore the file for the next input (the manifest is rewritten every time).
  fuzz::write_bytes(dir / p.files[which], p.bytes[which].data(), p.bytes[which].size());
  return 0;
}
