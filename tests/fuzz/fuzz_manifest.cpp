// libFuzzer target: a suite's manifest.json replaced by arbitrary bytes, next to the real case files
// (fuzz_common.hpp). Reached: io::read_manifest (nlohmann), io::verify_manifest, vectors::SuiteReader
// and SuiteReader::load of every case (each problem must be reported, not crash), and
// vectors::check_suite with the suite as its own results. Exceptions are the documented way out.
#include <cstddef>
#include <cstdint>
#include <exception>

#include "fp4sim/io/atomic_file.hpp"
#include "fp4sim/io/check.hpp"
#include "fp4sim/io/vectors.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fp4sim;
  const std::filesystem::path& dir = fuzz::suite_dir();
  fuzz::write_bytes(dir / "manifest.json", data, size);
  (void)io::verify_manifest(dir);
  try {
    const vectors::SuiteReader r(dir);
    for (size_t i = 0; i < r.size() && i < 16; ++i) (void)r.load(i);
  } catch (const io::IoError&) {
  }
  try {
    (void)vectors::check_report_json(vectors::check_suite(dir, dir));
  } catch (const io::IoError&) {
  }
  return 0;
}
