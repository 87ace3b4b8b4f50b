// libFuzzer target: the header-only reader (fp4sim/suite_reader.hpp). The first input byte picks what
// the rest is: 0 a .npy file, 1 a JSON text, 2 a manifest (parse_manifest), 3 a manifest written next
// to a real suite's files (fuzz_common.hpp) and every case loaded. fp4sim::suite::Error is the only
// way out; the parsed results are checked for self-consistency.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "fp4sim/suite_reader.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sr = fp4sim::suite;
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        const sr::Array a = sr::parse_npy(data + 1, size - 1, "fuzz.npy");
        size_t n = 1;
        for (size_t d : a.shape) n *= d;
        if (a.data.size() != n * a.itemsize) std::abort();
        break;
      }
      case 1: {
        const sr::Json j = sr::Json::parse(text);
        if (j.is_number()) (void)j.as_double();
        break;
      }
      case 2: (void)sr::parse_manifest(text); break;
      case 3: {
        const std::filesystem::path& dir = fp4sim::fuzz::suite_dir();
        fp4sim::fuzz::write_bytes(dir / "manifest.json", data + 1, size - 1);
        const sr::Suite s(dir.string());
        for (size_t i = 0; i < s.cases().size() && i < 16; ++i) (void)s.load_case(i);
        break;
      }
    }
  } catch (const sr::Error&) {
  }
  return 0;
}
